import { Type, type Static } from '@sinclair/typebox';

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failure', 'cancelled', 'timed_out'] as const;

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const RunStatusSchema = Type.Union(RUN_STATUSES.map((s) => Type.Literal(s)), { description: 'Lifecycle state of the run.' });

export const WebhookSummary = Type.Object({
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(),
});

export const RunView = Type.Object(
  {
    run_id: Type.String(),
    app_id: Type.String(),
    async: Type.Boolean(),
    status: RunStatusSchema,
    created_at: Type.String({ format: 'date-time' }),
    started_at: Nullable(Type.String({ format: 'date-time' })),
    finished_at: Nullable(Type.String({ format: 'date-time' })),
    run_time_ms: Type.Union([Type.Integer(), Type.Null()]),
    status_code: Type.Union([Type.Integer(), Type.Null()], { description: "The app's HTTP status, when it answered." }),
    error: Nullable(Type.String()),
    webhook: Type.Union([WebhookSummary, Type.Null()], { description: 'Webhook delivery state, when a webhook was requested.' }),
  },
  { $id: 'Run', title: 'Run' },
);
export type RunViewT = Static<typeof RunView>;

export const RunParams = Type.Object({
  project_id: Type.String({ minLength: 1, maxLength: 200 }),
  app_name: Type.String({ minLength: 1, maxLength: 63 }),
  run_id: Type.String({ minLength: 1, maxLength: 100 }),
});

export const AppRunsParams = Type.Object({
  project_id: Type.String({ minLength: 1, maxLength: 200 }),
  app_name: Type.String({ minLength: 1, maxLength: 63 }),
});

export const ManagementRunsParams = Type.Object({
  project_id: Type.String({ minLength: 1, maxLength: 200 }),
  app_id: Type.String({ minLength: 1, maxLength: 300 }),
});

export const RunListQuery = Type.Object({
  status: Type.Optional(RunStatusSchema),
  async: Type.Optional(Type.Boolean()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'next_cursor of the previous page.' })),
});

export const RunList = Type.Object({
  runs: Type.Array(RunView),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next (older) page; null on the last page.' }),
});
