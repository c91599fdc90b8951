import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../config/config.js';
import { createPool } from '../db/pool.js';
import { buildApp } from '../api/app.js';
import { createTemporalClient } from '../lib/temporal-client.js';
import { inject } from 'vitest';
import type { Pool } from 'pg';
import type { Client } from '@temporalio/client';

let app: FastifyInstance;
let pool: Pool;
let temporal: Client;

beforeAll(async () => {
  // PostgreSQL on a port where nothing listens; Temporal real.
  const config = loadConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', TEMPORAL_ADDRESS: inject('temporalAddress') });
  pool = createPool(config.databaseUrl, 1);
  temporal = await createTemporalClient(config);
  app = await buildApp({ config, pool, temporal });
});
afterAll(async () => {
  await app?.close();
  await temporal?.connection.close();
  await pool?.end();
});

it('answers 503 with a message naming what it cannot reach', async () => {
  const res = await app.inject({ method: 'GET', url: '/healthz' });
  expect(res.statusCode).toBe(503);
  const body = res.json();
  expect(body.status).toBe('unavailable');
  expect(body.message).toMatch(/PostgreSQL/);
  expect(body.message).not.toMatch(/Temporal/);
  expect(body.temporal).toBe('ok');
});

it('answers 503 {message} on the run path when PostgreSQL is down', async () => {
  const res = await app.inject({ method: 'POST', url: '/v4/p/a/run', headers: { authorization: `Bearer rh_${'a'.repeat(43)}` }, payload: {} });
  expect(res.statusCode).toBe(503);
  expect(Object.keys(res.json())).toEqual(['message']);
});
