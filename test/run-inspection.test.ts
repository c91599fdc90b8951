import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../examples/echo/echo-app.js';
import { ensureRetentionSchedule } from '../worker/retention-schedule.js';
import { authHeaders, startStack, waitFor, type Stack } from './helpers/stack.js';

let stack: Stack;
let echo: EchoApp;
let token: string;
let otherToken: string;

beforeAll(async () => {
  stack = await startStack({ worker: true, env: { RESULT_RETENTION_SECONDS: '2', RESULT_PRUNE_INTERVAL_SECONDS: '3600' } });
  echo = await startEchoApp();
  token = await stack.token('proj');
  otherToken = await stack.token('other');
  await stack.deploy('proj', { name: 'echo', url: echo.url });
  await stack.deploy('proj', { name: 'second', url: echo.url });
  await stack.deploy('other', { name: 'echo', url: echo.url });
});
afterAll(async () => {
  await echo?.close();
  await stack?.close();
});

const api = (path: string, init: RequestInit & { tok?: string } = {}) =>
  fetch(`${stack.baseUrl}${path}`, { ...init, headers: { ...authHeaders(init.tok ?? token), ...(init.headers as Record<string, string>) } });

async function submit(body: unknown, headers: Record<string, string> = {}, appName = 'echo') {
  const res = await api(`/v4/proj/${appName}/run?async=true`, { method: 'POST', body: JSON.stringify(body), headers });
  return { res, runId: (await res.json()).run_id as string };
}

async function finished(runId: string, appName = 'echo') {
  return waitFor(async () => {
    const r = await (await api(`/v4/proj/${appName}/runs/${runId}`)).json();
    return r.finished_at ? r : null;
  });
}

describe('run status and result', () => {
  it('shows an async run moving to succeeded, then serves its result as the app sent it', async () => {
    const { runId } = await submit({ sleep_ms: 800, raw: '<p>done</p>', content_type: 'text/html', status: 201 });
    const early = await (await api(`/v4/proj/echo/runs/${runId}`)).json();
    expect(['queued', 'running']).toContain(early.status);
    const pending = await api(`/v4/proj/echo/runs/${runId}/result`);
    expect(pending.status).toBe(409);
    expect((await pending.json()).message).toMatch(/not available yet/);

    const run = await finished(runId);
    expect(run).toMatchObject({ run_id: runId, app_id: 'proj-echo', async: true, status: 'succeeded', status_code: 201, webhook: null });
    expect(run.run_time_ms).toBeGreaterThanOrEqual(700);
    expect(Date.parse(run.started_at)).toBeGreaterThanOrEqual(Date.parse(run.created_at));
    const result = await api(`/v4/proj/echo/runs/${runId}/result`);
    expect(result.status).toBe(201);
    expect(result.headers.get('content-type')).toBe('text/html');
    expect(await result.text()).toBe('<p>done</p>');
  });

  it('records synchronous runs too', async () => {
    const before = Date.now();
    const res = await api('/v4/proj/echo/run', { method: 'POST', body: JSON.stringify({ status: 404, sleep_ms: 150 }) });
    const after = Date.now();
    expect(res.status).toBe(404);
    const runId = res.headers.get('x-run-id')!;
    const run = await waitFor(async () => {
      const r = await api(`/v4/proj/echo/runs/${runId}`);
      return r.status === 200 ? r.json() : null;
    });
    expect(run).toMatchObject({ async: false, status: 'failure', status_code: 404 });
    // Times as the API measured them, to the millisecond.
    const created = Date.parse(run.created_at);
    const done = Date.parse(run.finished_at);
    expect(created).toBeGreaterThanOrEqual(before);
    expect(done).toBeLessThanOrEqual(after);
    expect(run.started_at).toBe(run.created_at);
    expect(done - created).toBe(run.run_time_ms);
    expect(run.run_time_ms).toBeGreaterThanOrEqual(150);
  });

  it('answers 404 for an unknown run, or a run asked through another app', async () => {
    const { runId } = await submit({});
    expect((await api('/v4/proj/echo/runs/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    expect((await api(`/v4/proj/second/runs/${runId}`)).status).toBe(404);
    expect((await api(`/v4/proj/nope/runs/${runId}`)).status).toBe(404);
  });

  it('makes runs findable in Temporal by app and status search attributes', async () => {
    const { runId } = await submit({ status: 500 });
    await finished(runId);
    const found: string[] = [];
    await waitFor(async () => {
      found.length = 0;
      for await (const wf of stack.temporal.workflow.list({ query: `AppName='echo' AND RunStatus='failure' AND ProjectId='proj'` })) found.push(wf.workflowId);
      return found.includes(runId);
    }, 15_000, 500);
    const desc = await stack.temporal.workflow.getHandle(runId).describe();
    expect(await desc.staticSummary()).toContain(runId);
  });
});

describe('listing', () => {
  it('lists newest first with cursor paging and filters, on /v4 and /v2', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await submit({ i }, {}, 'second')).runId);
    await Promise.all(ids.map((id) => finished(id, 'second')));
    const page1 = await (await api('/v4/proj/second/runs?limit=2')).json();
    expect(page1.runs.map((r: { run_id: string }) => r.run_id)).toEqual([ids[4], ids[3]]);
    const page2 = await (await api(`/v4/proj/second/runs?limit=2&cursor=${page1.next_cursor}`)).json();
    expect(page2.runs.map((r: { run_id: string }) => r.run_id)).toEqual([ids[2], ids[1]]);
    const page3 = await (await api(`/v4/proj/second/runs?limit=2&cursor=${page2.next_cursor}`)).json();
    expect(page3.runs.map((r: { run_id: string }) => r.run_id)).toEqual([ids[0]]);
    expect(page3.next_cursor).toBeNull();

    const v2 = await (await api('/v2/projects/proj/apps/proj-second/runs?limit=100&status=succeeded&async=true')).json();
    expect(v2.runs.map((r: { run_id: string }) => r.run_id)).toEqual([...ids].reverse());
    expect((await (await api('/v4/proj/second/runs?status=failure')).json()).runs).toEqual([]);

    expect((await api('/v4/proj/second/runs?status=bogus')).status).toBe(400);
    expect((await api('/v4/proj/second/runs?limit=0')).status).toBe(400);
    expect((await api('/v4/proj/second/runs?cursor=zzz')).status).toBe(400);
    expect((await api('/v2/projects/proj/apps/proj-nope/runs')).status).toBe(404);
  });
});

describe('cancel', () => {
  it('cancels a long-running run and really aborts the call to the app', async () => {
    const { runId } = await submit({ sleep_ms: 20_000 });
    await waitFor(async () => echo.calls.some((c) => c.requestId === runId));
    const res = await api(`/v4/proj/echo/runs/${runId}/cancel`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ run_id: runId, status: 'cancelling' });
    const run = await finished(runId);
    expect(run.status).toBe('cancelled');
    await waitFor(async () => echo.calls.find((c) => c.requestId === runId)?.disconnected, 10_000);
    const desc = await stack.temporal.workflow.getHandle(runId).describe();
    expect(desc.status.name).toBe('CANCELLED');
    expect((await api(`/v4/proj/echo/runs/${runId}/result`)).status).toBe(404);
  });

  it('answers 409 for a finished run and for a sync run', async () => {
    const { runId } = await submit({});
    await finished(runId);
    const res = await api(`/v4/proj/echo/runs/${runId}/cancel`, { method: 'POST' });
    expect(res.status).toBe(409);
    expect((await res.json()).message).toMatch(/already finished/);
  });
});

describe('idempotency keys', () => {
  it('returns the same run for the same key and body, and 409 for a different body', async () => {
    const key = `k-${Date.now()}`;
    const a = await submit({ x: 1 }, { 'idempotency-key': key });
    const b = await submit({ x: 1 }, { 'idempotency-key': key });
    expect(a.res.status).toBe(202);
    expect(b.res.status).toBe(202);
    expect(b.runId).toBe(a.runId);
    const c = await api('/v4/proj/echo/run?async=true', { method: 'POST', body: JSON.stringify({ x: 2 }), headers: { 'idempotency-key': key } });
    expect(c.status).toBe(409);
    expect((await c.json()).message).toMatch(/Idempotency-Key/);
    // Keys are per app: the same key on another app is a new run.
    expect((await submit({ x: 1 }, { 'idempotency-key': key }, 'second')).runId).not.toBe(a.runId);
    const bad = await api('/v4/proj/echo/run?async=true', { method: 'POST', body: '{}', headers: { 'idempotency-key': 'x'.repeat(300) } });
    expect(bad.status).toBe(400);
  });

  it('turns 20 concurrent identical requests into exactly one run', async () => {
    const key = `race-${Date.now()}`;
    const before = echo.calls.length;
    const results = await Promise.all(Array.from({ length: 20 }, () => submit({ race: true, key }, { 'idempotency-key': key })));
    expect(results.every((r) => r.res.status === 202)).toBe(true);
    expect(new Set(results.map((r) => r.runId)).size).toBe(1);
    await finished(results[0].runId);
    await new Promise((r) => setTimeout(r, 500));
    expect(echo.calls.slice(before).filter((c) => (c.body as { key?: string }).key === key)).toHaveLength(1);
    const { rows } = await stack.pool.query("SELECT count(*)::int AS n FROM runs WHERE app_id = 'proj-echo' AND run_id = ANY($1)", [results.map((r) => r.runId)]);
    expect(rows[0].n).toBe(1);
  });
});

describe('retention', () => {
  it('prunes stored results past retention through the Temporal schedule (410), and closes never-started rows', async () => {
    const { runId } = await submit({ keep: 'briefly' });
    await finished(runId);
    expect((await api(`/v4/proj/echo/runs/${runId}/result`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_100));
    // A row whose workflow never started (API died before the start; no 202 was given).
    await stack.pool.query(
      `INSERT INTO runs (run_id, app_id, project_id, app_name, async, status, created_at)
       VALUES ('orphan-1', 'proj-echo', 'proj', 'echo', true, 'queued', now() - interval '20 minutes')`,
    );
    const scheduleId = await ensureRetentionSchedule(stack.temporal, stack.config);
    await stack.temporal.schedule.getHandle(scheduleId).trigger();
    const gone = await waitFor(async () => {
      const r = await api(`/v4/proj/echo/runs/${runId}/result`);
      return r.status === 410 ? r : null;
    }, 20_000, 250);
    expect((await gone.json()).message).toMatch(/retention/);
    const { rows } = await stack.pool.query('SELECT count(*)::int AS n FROM run_payloads WHERE run_id = $1', [runId]);
    expect(rows[0].n).toBe(0);
    const orphan = await waitFor(async () => {
      const r = await (await api('/v4/proj/echo/runs/orphan-1')).json();
      return r.finished_at ? r : null;
    });
    expect(orphan).toMatchObject({ status: 'failure', error: 'run was never started (not accepted)' });
    await stack.temporal.schedule.getHandle(scheduleId).delete();
  });
});

describe('tenant isolation', () => {
  it('never lets a token of another project read, list or cancel a run', async () => {
    const { runId } = await submit({ sleep_ms: 3000 });
    for (const [path, method] of [
      [`/v4/proj/echo/runs/${runId}`, 'GET'],
      [`/v4/proj/echo/runs/${runId}/result`, 'GET'],
      ['/v4/proj/echo/runs', 'GET'],
      ['/v2/projects/proj/apps/proj-echo/runs', 'GET'],
      [`/v4/proj/echo/runs/${runId}/cancel`, 'POST'],
    ] as const) {
      const res = await api(path, { method, tok: otherToken });
      expect(res.status, path).toBe(403);
    }
    // Through its own project path the run does not exist either.
    expect((await api(`/v4/other/echo/runs/${runId}`, { tok: otherToken })).status).toBe(404);
    expect((await api(`/v4/other/echo/runs/${runId}/cancel`, { method: 'POST', tok: otherToken })).status).toBe(404);
    expect((await finished(runId)).status).toBe('succeeded');
  });
});
