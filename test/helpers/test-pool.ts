import { afterAll, beforeAll } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from './test-database.js';

/**
 * A throwaway migrated database and a pool on it for the calling test file: created before its
 * tests, dropped after them. Read `db` and `pool` inside tests and hooks, not at import time.
 */
export function useTestPool(max = 2): { readonly db: TestDatabase; readonly pool: pg.Pool } {
  const state = {} as { db: TestDatabase; pool: pg.Pool };
  beforeAll(async () => {
    state.db = await createTestDatabase();
    state.pool = new pg.Pool({ connectionString: state.db.url, max });
  });
  afterAll(async () => {
    await state.pool?.end();
    await state.db?.drop();
  });
  return state;
}
