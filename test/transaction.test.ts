import { beforeAll, expect, it } from 'vitest';
import { useTestPool } from './helpers/test-pool.js';
import { withTransaction } from '../db/transaction.js';

const t = useTestPool(1);

beforeAll(async () => {
  await t.pool.query('CREATE TABLE tx_probe (n int)');
});

const rows = async () => (await t.pool.query('SELECT n FROM tx_probe ORDER BY n')).rows.map((r) => r.n);

it('commits what the work wrote and returns its result', async () => {
  const result = await withTransaction(t.pool, async (client) => {
    await client.query('INSERT INTO tx_probe VALUES (1), (2)');
    return 'done';
  });
  expect(result).toBe('done');
  expect(await rows()).toEqual([1, 2]);
});

it('rolls back everything when the work fails, rethrows, and gives the client back to the pool', async () => {
  await expect(
    withTransaction(t.pool, async (client) => {
      await client.query('INSERT INTO tx_probe VALUES (3)');
      await client.query('SELECT 1/0');
    }),
  ).rejects.toThrow(/division by zero/);
  // A pool of one: this query only runs if the client was released, and sees no row 3.
  expect(await rows()).toEqual([1, 2]);
  expect(t.pool.totalCount - t.pool.idleCount).toBe(0);
});

it('uses a given client as it is, and honours a read-only BEGIN', async () => {
  const client = await t.pool.connect();
  try {
    await expect(withTransaction(client, (c) => c.query('INSERT INTO tx_probe VALUES (4)'), 'BEGIN READ ONLY')).rejects.toThrow(/read-only/);
    expect((await client.query('SELECT count(*)::int AS n FROM tx_probe')).rows[0].n).toBe(2);
  } finally {
    client.release();
  }
});
