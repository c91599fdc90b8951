import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { v7 as uuidv7 } from 'uuid';
import { useTestPool } from './helpers/test-pool.js';
import { RunLog } from '../api/run-log.js';
import { runsRepository, type SyncRunRecord } from '../db/repositories/runs.js';

const t = useTestPool();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function syncRun(): SyncRunRecord {
  const finishedAt = new Date();
  return {
    runId: uuidv7(), appId: 'p-steady', projectId: 'p', appName: 'steady', status: 'succeeded',
    createdAt: new Date(finishedAt.getTime() - 3), finishedAt, runTimeMs: 3, statusCode: 200, error: null,
  };
}

describe('RunLog (the sync run log)', () => {
  it('under steady load writes about one batch per 100 ms, and every row without waiting for more traffic', async () => {
    const runs = runsRepository(t.pool);
    let writes = 0;
    const counted = { ...runs, insertSyncRuns: async (rows: SyncRunRecord[]) => { writes++; return runs.insertSyncRuns(rows); } };
    const log = new RunLog(counted, pino({ level: 'silent' }));
    const ids: string[] = [];
    const t0 = performance.now();
    // Rows keep arriving while each write is in flight.
    while (performance.now() - t0 < 1_000) {
      const row = syncRun();
      ids.push(row.runId);
      log.add(row);
      await sleep(1);
    }
    const intervals = (performance.now() - t0) / 100;
    await sleep(250);
    // Everything is written without close(): the last rows do not wait for more traffic.
    const { rows } = await t.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM runs WHERE run_id = ANY($1::text[])', [ids]);
    expect(rows[0].n).toBe(ids.length);
    expect(log.written).toBe(ids.length);
    expect(writes).toBeLessThanOrEqual(Math.ceil(intervals) + 2);
    await log.close();
  });
});
