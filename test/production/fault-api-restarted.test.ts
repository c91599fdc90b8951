import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../../examples/echo/echo-app.js';
import { freePort } from '../../scripts/temporal-dev-server.js';
import { authHeaders, startStack, waitFor, type Stack } from '../helpers/stack.js';
import { startService, type ChildService } from '../helpers/processes.js';

// The API as a real process, SIGKILLed and started again on its port while clients keep submitting.
let stack: Stack;
let echo: EchoApp;
let api: ChildService | null = null;
let env: Record<string, string>;

beforeAll(async () => {
  stack = await startStack({ worker: true });
  echo = await startEchoApp();
  await stack.deploy('proj', { name: 'echo', url: echo.url });
  env = { ...stack.env, PORT: String(await freePort()), LOG_LEVEL: 'info' };
  api = await startService('api/server.ts', env, /Server listening/);
}, 90_000);
afterAll(async () => {
  await api?.kill('SIGTERM');
  await echo?.close();
  await stack?.close();
});

it('turns every 202 it ever returned into a run, across a SIGKILL and restart of the API', async () => {
  const token = await stack.token('proj');
  const url = `http://127.0.0.1:${env.PORT}/v4/proj/echo/run?async=true`;
  const accepted: string[] = [];
  let attempts = 0;
  let refused = 0;
  let stop = false;
  const client = async (c: number) => {
    for (let i = 0; !stop; i++) {
      attempts++;
      try {
        const res = await fetch(url, { method: 'POST', headers: authHeaders(token), body: JSON.stringify({ c, i }) });
        if (res.status === 202) accepted.push(((await res.json()) as { run_id: string }).run_id);
        else refused++;
      } catch {
        // The API is down: no answer, so no promise was made; try again shortly.
        refused++;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const clients = Array.from({ length: 8 }, (_, c) => client(c));
  await waitFor(async () => accepted.length >= 40, 20_000, 20);
  const beforeKill = accepted.length;
  await api!.kill('SIGKILL');
  api = await startService('api/server.ts', env, /Server listening/);
  await waitFor(async () => accepted.length >= beforeKill + 40, 30_000, 20);
  stop = true;
  await Promise.all(clients);

  const finished = await waitFor(async () => {
    const { rows } = await stack.pool.query(`SELECT run_id FROM runs WHERE run_id = ANY($1::text[]) AND status = 'succeeded'`, [accepted]);
    return rows.length === accepted.length ? rows : null;
  }, 60_000, 250).catch(() => null);
  const { rows: done } = await stack.pool.query(`SELECT count(*)::int AS n FROM runs WHERE run_id = ANY($1::text[]) AND status = 'succeeded'`, [accepted]);
  const figures = { attempts, accepted: accepted.length, refusedOrUnanswered: refused, completed: done[0].n, duplicated: accepted.length - new Set(accepted).size, lost: accepted.length - done[0].n };
  console.log(`fault: API SIGKILL+restart ${JSON.stringify(figures)}`);
  expect(finished).not.toBeNull();
  expect(figures.lost).toBe(0);
  expect(figures.duplicated).toBe(0);
  expect(refused).toBeGreaterThan(0);
}, 120_000);
