import type { Pool } from 'pg';
import type { AppDefinition } from '../../lib/app-manifest.js';

export interface App extends AppDefinition {
  appId: string;
  projectId: string;
  createdAt: Date;
  updatedAt: Date;
}

export function appIdOf(projectId: string, name: string): string {
  return `${projectId}-${name}`;
}

function toApp(r: Record<string, any>): App {
  return {
    appId: r.app_id,
    projectId: r.project_id,
    name: r.name,
    url: r.url,
    cpu: r.cpu,
    memoryGb: r.memory_gb,
    compute: r.compute,
    gpuCount: r.gpu_count,
    responseGracePeriod: r.response_grace_period,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The JSON shape the CLI prints and the API returns. */
export function appToJson(app: App) {
  return {
    app_id: app.appId,
    project_id: app.projectId,
    name: app.name,
    url: app.url,
    hardware: { cpu: app.cpu, memory: app.memoryGb, compute: app.compute, gpu_count: app.gpuCount },
    scaling: { response_grace_period: app.responseGracePeriod },
    created_at: app.createdAt.toISOString(),
    updated_at: app.updatedAt.toISOString(),
  };
}

export function appsRepository(pool: Pool) {
  return {
    async upsert(projectId: string, def: AppDefinition): Promise<App> {
      const { rows } = await pool.query(
        `INSERT INTO apps (app_id, project_id, name, url, cpu, memory_gb, compute, gpu_count, response_grace_period)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (app_id) DO UPDATE SET url = EXCLUDED.url, cpu = EXCLUDED.cpu, memory_gb = EXCLUDED.memory_gb,
           compute = EXCLUDED.compute, gpu_count = EXCLUDED.gpu_count,
           response_grace_period = EXCLUDED.response_grace_period, updated_at = now()
         RETURNING *`,
        [appIdOf(projectId, def.name), projectId, def.name, def.url, def.cpu, def.memoryGb, def.compute, def.gpuCount, def.responseGracePeriod],
      );
      return toApp(rows[0]);
    },

    async findByName(projectId: string, name: string): Promise<App | null> {
      const { rows } = await pool.query('SELECT * FROM apps WHERE project_id = $1 AND name = $2', [projectId, name]);
      return rows[0] ? toApp(rows[0]) : null;
    },

    async findById(projectId: string, appId: string): Promise<App | null> {
      const { rows } = await pool.query('SELECT * FROM apps WHERE project_id = $1 AND app_id = $2', [projectId, appId]);
      return rows[0] ? toApp(rows[0]) : null;
    },

    async list(projectId?: string): Promise<App[]> {
      const { rows } = await pool.query(
        'SELECT * FROM apps WHERE ($1::text IS NULL OR project_id = $1) ORDER BY project_id, name',
        [projectId ?? null],
      );
      return rows.map(toApp);
    },

    async remove(projectId: string, name: string): Promise<boolean> {
      const { rowCount } = await pool.query('DELETE FROM apps WHERE project_id = $1 AND name = $2', [projectId, name]);
      return (rowCount ?? 0) > 0;
    },
  };
}

export type AppsRepository = ReturnType<typeof appsRepository>;
