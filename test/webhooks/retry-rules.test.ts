import { describe, expect, it } from 'vitest';
import { authHeaders, waitFor } from '../helpers/stack.js';
import { useWebhookStack } from '../helpers/webhook-stack.js';
import type { ReceiverAction } from '../helpers/webhook-receiver.js';

// Every row of the retry table (interface section 6) against a real receiver: attempts are counted
// at the receiver and in the delivery log, and the gaps between attempts are measured.
const ATTEMPT_TIMEOUT_MS = 600;

const ctx = useWebhookStack({ WEBHOOK_ATTEMPT_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS) });

interface Log {
  state: string;
  deliveries: { state: string; error: string | null; attempts: { attempt: number; status_code: number | null; error: string | null; outcome: string; duration_ms: number }[] }[];
}

async function runWithWebhook(endpoint: string) {
  const res = await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/run?webhookEndpoint=${encodeURIComponent(endpoint)}`, {
    method: 'POST', headers: authHeaders(ctx.token), body: JSON.stringify({ hello: 'hook' }),
  });
  expect(res.status).toBe(200);
  expect((await res.json()).echo).toEqual({ hello: 'hook' });
  return res.headers.get('x-run-id')!;
}

async function finalLog(runId: string): Promise<Log> {
  return waitFor(async () => {
    const res = await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/runs/${runId}/webhook`, { headers: authHeaders(ctx.token) });
    if (res.status !== 200) return null;
    const log = (await res.json()) as Log;
    return log.state === 'pending' ? null : log;
  }, 40_000, 200);
}

/** Runs one scenario end to end: what the ctx.receiver saw and what the delivery log says. */
async function scenario(script: (n: number) => ReceiverAction) {
  const endpoint = ctx.receiver.endpoint(script);
  const runId = await runWithWebhook(endpoint);
  const log = await finalLog(runId);
  // A last look, so an attempt that would arrive after the final state is caught too.
  await new Promise((r) => setTimeout(r, 300));
  const seen = ctx.receiver.to(endpoint);
  const gaps = seen.slice(1).map((r, i) => r.at - seen[i].at);
  const run = await (await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/runs/${runId}`, { headers: authHeaders(ctx.token) })).json();
  return { runId, log, seen, gaps, run };
}

const status = (s: number, headers?: Record<string, string>): ReceiverAction => ({ status: s, headers });

describe('retry table', () => {
  it('applies every row: retried, not retried, delivered; at most 3 attempts, never more than 5 s apart', async () => {
    const [ok, notFound, notFoundThenOk, badRequest, tooMany, serverError, unavailable, redirect, multipleChoices, reset, timeout] = await Promise.all([
      scenario(() => status(204)),
      scenario(() => status(404)),
      scenario((n) => status(n === 1 ? 404 : 200)),
      scenario(() => status(400)),
      scenario(() => status(429)),
      scenario(() => status(500)),
      scenario(() => status(503)),
      scenario(() => status(302, { location: `${ctx.receiver.baseUrl}/redirect-target` })),
      scenario(() => status(300)),
      scenario(() => ({ destroy: true })),
      scenario(() => ({ hang: true })),
    ]);

    // 2xx: delivered on the first attempt.
    expect(ok.seen).toHaveLength(1);
    expect(ok.log.state).toBe('delivered');
    expect(ok.log.deliveries[0].attempts).toMatchObject([{ attempt: 1, status_code: 204, outcome: 'delivered', error: null }]);

    // 404: retried, 3 attempts in total, then failed.
    expect(notFound.seen).toHaveLength(3);
    expect(notFound.log.state).toBe('failed');
    expect(notFound.log.deliveries[0].attempts.map((a) => [a.attempt, a.status_code, a.outcome])).toEqual([[1, 404, 'retry'], [2, 404, 'retry'], [3, 404, 'retry']]);
    expect(notFoundThenOk.seen).toHaveLength(2);
    expect(notFoundThenOk.log.state).toBe('delivered');

    // Other 4xx and every 5xx: one attempt, permanent failure.
    for (const [s, code] of [[badRequest, 400], [tooMany, 429], [serverError, 500], [unavailable, 503]] as const) {
      expect(s.seen, `HTTP ${code}`).toHaveLength(1);
      expect(s.log.state).toBe('failed');
      expect(s.log.deliveries[0].attempts).toMatchObject([{ attempt: 1, status_code: code, outcome: 'rejected' }]);
    }

    // 3xx (any non-2xx outside 4xx/5xx): retried; a redirect is never followed.
    for (const s of [redirect, multipleChoices]) {
      expect(s.seen).toHaveLength(3);
      expect(s.log.state).toBe('failed');
      expect(s.log.deliveries[0].attempts.every((a) => a.outcome === 'retry')).toBe(true);
    }
    expect(ctx.receiver.requests.filter((r) => r.path === '/redirect-target')).toHaveLength(0);

    // Network errors: a dropped connection and a timeout are retried, 3 attempts, each recorded with its error.
    expect(reset.seen).toHaveLength(3);
    expect(reset.log.state).toBe('failed');
    expect(reset.log.deliveries[0].attempts.every((a) => a.outcome === 'retry' && a.status_code === null && a.error)).toBe(true);
    expect(timeout.seen).toHaveLength(3);
    expect(timeout.log.state).toBe('failed');
    for (const a of timeout.log.deliveries[0].attempts) {
      expect(a.error).toMatch(/timeout/);
      expect(a.duration_ms).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS - 50);
      expect(a.duration_ms).toBeLessThan(ATTEMPT_TIMEOUT_MS + 1500);
    }

    // Delays between attempts: backoff of 1 s then 2 s, never above 5 s (a timeout adds its own wait).
    for (const s of [notFound, redirect, multipleChoices, reset]) {
      expect(s.gaps).toHaveLength(2);
      for (const gap of s.gaps) {
        expect(gap).toBeGreaterThanOrEqual(900);
        expect(gap).toBeLessThanOrEqual(5_000);
      }
    }
    for (const gap of timeout.gaps) expect(gap - ATTEMPT_TIMEOUT_MS).toBeLessThanOrEqual(5_000);

    // All attempts failed: recorded as failed, and the run itself is untouched.
    for (const s of [notFound, serverError, reset, timeout]) {
      expect(s.run.status).toBe('succeeded');
      expect(s.run.status_code).toBe(200);
      expect(s.run.webhook).toMatchObject({ state: 'failed' });
    }
    expect(ok.run.webhook).toEqual({ state: 'delivered', attempts: 1 });
  });

  it('honours Retry-After on a retried status, capped at 5 s', async () => {
    const s = await scenario((n) => (n === 1 ? status(404, { 'retry-after': '120' }) : status(200)));
    expect(s.seen).toHaveLength(2);
    // The backoff itself is capped at exactly 5 s in the activity; the rest of the gap is scheduling.
    expect(s.gaps[0]).toBeGreaterThanOrEqual(4_500);
    expect(s.gaps[0] - s.log.deliveries[0].attempts[0].duration_ms).toBeLessThanOrEqual(5_800);
    expect(s.log.state).toBe('delivered');
  });
});
