import pg from 'pg';

// int8 and numeric come back as strings by default; counts and micro-cents are exact in BigInt,
// so callers choose per query rather than losing precision behind a global parser.
export function createPool(databaseUrl: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, idleTimeoutMillis: 30_000 });
  // An idle client that loses its server (restart, terminated backend) must not crash the process.
  pool.on('error', () => {});
  return pool;
}

export type { Pool, PoolClient } from 'pg';
