import { Type } from '@sinclair/typebox';

export const RunParams = Type.Object({
  project_id: Type.String({ minLength: 1, maxLength: 200 }),
  app_name: Type.String({ minLength: 1, maxLength: 63 }),
});

export const RunQuery = Type.Object({
  async: Type.Optional(Type.Boolean({ description: 'true runs in the background and answers 202 with a run_id.' })),
  webhookEndpoint: Type.Optional(Type.String({ description: 'URL that receives the run response by POST.' })),
});

export const AsyncAccepted = Type.Object(
  { run_id: Type.String({ description: 'Identifier of the accepted asynchronous run (the Temporal workflow id).' }) },
  { additionalProperties: false, description: 'The run was durably accepted.' },
);
