import { Type } from '@sinclair/typebox';

export const AppView = Type.Object(
  {
    app_id: Type.String({ description: '`<project_id>-<app_name>`' }),
    project_id: Type.String(),
    name: Type.String(),
    url: Type.String({ description: "Where the app's function is served." }),
    hardware: Type.Object({ cpu: Type.Number(), memory: Type.Number(), compute: Type.String(), gpu_count: Type.Integer() }),
    scaling: Type.Object({ response_grace_period: Type.Integer({ description: 'Seconds.' }) }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'App', title: 'App' },
);

export const AppList = Type.Object({ apps: Type.Array(AppView) }, { $id: 'AppList', title: 'App list' });

export const ProjectParams = Type.Object({ project_id: Type.String({ minLength: 1, maxLength: 200 }) });
