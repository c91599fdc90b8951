import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
// Serialises concurrent migrators (API and worker starting together, parallel test files).
const LOCK_KEY = 727_001;

export type Backend = 'timescaledb' | 'postgres';

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) return false;
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return false;
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    return true;
  } catch (err) {
    // Another process created it between our check and our CREATE.
    if ((err as { code?: string }).code === '42P04') return false;
    throw err;
  } finally {
    await client.end();
  }
}

export async function detectBackend(client: pg.ClientBase): Promise<Backend> {
  const { rowCount } = await client.query(
    "SELECT 1 FROM pg_available_extensions WHERE name = 'timescaledb'",
  );
  return rowCount ? 'timescaledb' : 'postgres';
}

interface Migration {
  version: string;
  file: string;
}

/**
 * Migrations are `NNN_name.sql`, or a pair `NNN_name.timescaledb.sql` / `NNN_name.postgres.sql`
 * of which the one matching the server's backend is applied. Each runs in its own transaction.
 */
async function listMigrations(backend: Backend): Promise<Migration[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
  const chosen: Migration[] = [];
  for (const file of files) {
    const m = /^(\d+_[a-z0-9_]+?)(?:\.(timescaledb|postgres))?\.sql$/.exec(file);
    if (!m) throw new Error(`migration file name not understood: ${file}`);
    if (m[2] && m[2] !== backend) continue;
    chosen.push({ version: m[1], file });
  }
  return chosen;
}

export interface MigrateResult {
  backend: Backend;
  applied: string[];
}

export async function migrate(databaseUrl: string, log: (line: string) => void = () => {}): Promise<MigrateResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    const backend = await detectBackend(client);
    log(`database backend: ${backend === 'timescaledb' ? 'TimescaleDB (hypertables, continuous aggregates)' : 'plain PostgreSQL (rollup tables kept by the application)'}`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY, file text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await client.query('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const applied: string[] = [];
    for (const m of await listMigrations(backend)) {
      if (done.has(m.version)) continue;
      const sql = await readFile(path.join(MIGRATIONS_DIR, m.file), 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (version, file) VALUES ($1, $2)', [m.version, m.file]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${m.file} failed: ${(err as Error).message}`);
      }
      applied.push(m.file);
      log(`applied migration ${m.file}`);
    }
    return { backend, applied };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
    await client.end();
  }
}
