import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { startStack, authHeaders, type Stack } from '../helpers/stack.js';
import { insertCostEvents, insertRequestEvents } from '../../db/metrics/insert-events.js';
import { queryDashboardBuckets } from '../../db/metrics/dashboard-query.js';
import { sumBuckets } from '../../db/metrics/dashboard-response.js';
import type { CostEvent, RequestEvent } from '../../db/metrics/event-types.js';
import { expectedBody, findDay, findTransition, offsetsOnQuarterHours, oracleBuckets, type Unit } from './helpers/bucket-oracle.js';
import { costAt, makeEvents, prng } from './helpers/event-data.js';

const H = 3_600_000;
const D = 24 * H;
const PROJECT = 'pm';
const APP = 'pm-metrics';

let stack: Stack;
let token: string;
const requests: RequestEvent[] = [];
const costs: CostEvent[] = [];
const now = Date.now();
// The window the data covers: as far back as the endpoint allows, and far enough ahead to hold the
// next spring-forward and fall-back of every zone below (future periods are valid periods).
const FROM = now - 179 * D;
const TO = now + 200 * D;

const ZONES = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Europe/Berlin',
  'America/St_Johns', 'Pacific/Chatham', 'America/Havana', 'America/Santiago', 'Asia/Tehran', 'Australia/Adelaide',
  'Europe/Dublin', 'Africa/Casablanca', 'Pacific/Kiritimati'];

// Every offset change of every zone in the window: the events are dense around them.
const transitions: Array<{ zone: string; at: number }> = [];
for (const zone of ZONES) {
  let from = new Date(FROM);
  for (;;) {
    let t;
    try {
      t = findTransition(zone, from, Math.ceil((TO - from.getTime()) / D));
    } catch {
      break;
    }
    if (t.at >= TO) break;
    transitions.push({ zone, at: t.at });
    from = new Date(t.at + 15 * 60_000);
  }
}

async function get(query: Record<string, string>, app = APP, tok = token): Promise<{ status: number; body: any }> {
  const qs = new URLSearchParams(query).toString();
  const res = await fetch(`${stack.baseUrl}/v2/projects/${PROJECT}/apps/${app}/dashboard-metrics${qs ? `?${qs}` : ''}`, { headers: authHeaders(tok) });
  return { status: res.status, body: await res.json() };
}

const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  stack = await startStack();
  token = await stack.token(PROJECT);
  await stack.deploy(PROJECT, { name: 'metrics', url: 'http://127.0.0.1:9/' });
  await stack.deploy(PROJECT, { name: 'other', url: 'http://127.0.0.1:9/' });
  const data = makeEvents({ appId: APP, from: FROM, to: TO, n: 20_000, hotspots: transitions.map((t) => t.at), seed: 7 });
  requests.push(...data.requests);
  costs.push(...data.costs);
  // Another app's events must never leak into this app's answer.
  const noise = makeEvents({ appId: 'pm-other', from: FROM, to: TO, n: 3_000, seed: 9 });
  await insertRequestEvents(stack.pool, [...requests, ...noise.requests]);
  await insertCostEvents(stack.pool, [...costs, ...noise.costs]);
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

function check(q: { start: number; end: number; interval: Unit; tz: string }, body: any) {
  const period = { start: new Date(q.start), end: new Date(q.end), interval: q.interval, tz: q.tz };
  const expected = expectedBody(q, oracleBuckets(period, requests, costs));
  expect(Object.keys(body.requests)).toEqual(Object.keys(expected.requests));
  expect(Object.keys(body.costs)).toEqual(Object.keys(expected.costs));
  expect(body.requests).toEqual(expected.requests);
  expect(body.costs).toEqual(expected.costs);
}

function totalsMatchBuckets(body: any) {
  const sum: Record<string, number> = {};
  for (const e of Object.values<Record<string, number>>(body.requests)) for (const [k, v] of Object.entries(e)) sum[k] = (sum[k] ?? 0) + v;
  expect(body.request_totals).toEqual(sum);
  const u = (cents: number) => BigInt(Math.round(cents * 1e6));
  for (const f of ['gpu_cost_cents', 'cpu_cost_cents', 'memory_cost_cents', 'total_cost_cents'] as const) {
    let s = 0n;
    for (const e of Object.values<Record<string, number>>(body.costs)) s += u(e[f]);
    expect(u(body.cost_totals[f])).toBe(s);
  }
  let ms = 0;
  for (const e of Object.values<Record<string, number>>(body.costs)) ms += e.total_running_time_ms;
  expect(body.cost_totals.total_running_time_ms).toBe(ms);
  expect(body.cost_totals.unique_container_count).toBe(0);
}

describe('dashboard-metrics endpoint', () => {
  it('defaults to the current UTC billing month by day, zero-filled, with the section 2.1 shape', async () => {
    const { status, body } = await get({});
    expect(status).toBe(200);
    const first = DateTime.utc().startOf('month');
    const days = first.daysInMonth!;
    expect(body.interval).toBe('day');
    expect(body.start_date).toBe(first.toISO({ suppressMilliseconds: true }));
    expect(body.end_date).toBe(first.plus({ months: 1 }).minus({ milliseconds: 1 }).toISO());
    expect(Object.keys(body.requests)).toHaveLength(days);
    expect(Object.keys(body.requests)[0]).toBe(first.toISO({ suppressMilliseconds: true }));
    expect(Object.keys(body.costs)[0]).toBe(first.toISODate());
    expect(Object.keys(body).sort()).toEqual(['cost_totals', 'costs', 'end_date', 'interval', 'request_totals', 'requests', 'start_date']);
    for (const e of Object.values<any>(body.costs)) expect(e.unique_container_count).toBe(0);
    for (const e of Object.values<any>(body.requests)) for (const v of Object.values<number>(e)) expect(Number.isInteger(v)).toBe(true);
    check({ start: first.toMillis(), end: first.plus({ months: 1 }).toMillis(), interval: 'day', tz: 'UTC' }, body);
    totalsMatchBuckets(body);
  });

  it('previous month, by month, in a zone: the UTC billing month re-bucketed in the zone', async () => {
    const { status, body } = await get({ month: 'previous', interval: 'month', tz: 'Asia/Kolkata' });
    expect(status).toBe(200);
    const first = DateTime.utc().startOf('month').minus({ months: 1 });
    expect(body.start_date).toBe(first.toISO({ suppressMilliseconds: true }));
    check({ start: first.toMillis(), end: first.plus({ months: 1 }).toMillis(), interval: 'month', tz: 'Asia/Kolkata' }, body);
  });

  it('America/New_York: the 25-hour day and its two separate 01:00 hours', async () => {
    const day = findDay('America/New_York', new Date(FROM), (h) => h === 25);
    const start = day.toMillis();
    const { body } = await get({ start: iso(start - D), end: iso(start + 2 * D), interval: 'day', tz: 'America/New_York' });
    const keys = Object.keys(body.requests);
    expect(keys).toHaveLength(3);
    expect(keys[1]).toBe(day.toISO({ suppressMilliseconds: true }));
    expect(keys[1].endsWith('-04:00')).toBe(true);
    expect(keys[2].endsWith('-05:00')).toBe(true);
    expect(Date.parse(keys[2]) - Date.parse(keys[1])).toBe(25 * H);
    check({ start: start - D, end: start + 2 * D, interval: 'day', tz: 'America/New_York' }, body);

    const hours = await get({ start: iso(start), end: iso(start + 25 * H), interval: 'hour', tz: 'America/New_York' });
    const hk = Object.keys(hours.body.requests);
    expect(hk).toHaveLength(25);
    // Local 01:00 EDT and 01:00 EST are two buckets an hour apart, never one two-hour bucket.
    const one = hk.filter((k) => DateTime.fromISO(k, { zone: 'America/New_York' }).hour === 1);
    expect(one).toHaveLength(2);
    expect(Date.parse(one[1]) - Date.parse(one[0])).toBe(H);
    expect(hours.body.requests[one[0]].total).toBeGreaterThan(0);
    expect(hours.body.requests[one[1]].total).toBeGreaterThan(0);
    check({ start, end: start + 25 * H, interval: 'hour', tz: 'America/New_York' }, hours.body);
    totalsMatchBuckets(hours.body);
  });

  it('America/New_York: the 23-hour day (next spring-forward, a future period)', async () => {
    const day = findDay('America/New_York', new Date(FROM), (h) => h === 23);
    const start = day.toMillis();
    const { status, body } = await get({ start: iso(start), end: iso(start + 23 * H), interval: 'hour', tz: 'America/New_York' });
    expect(status).toBe(200);
    expect(Object.keys(body.requests)).toHaveLength(23);
    check({ start, end: start + 23 * H, interval: 'hour', tz: 'America/New_York' }, body);
    const days = await get({ start: iso(start), end: iso(start + 3 * D), interval: 'day', tz: 'America/New_York' });
    const k = Object.keys(days.body.requests);
    expect(Date.parse(k[1]) - Date.parse(k[0])).toBe(23 * H);
    check({ start, end: start + 3 * D, interval: 'day', tz: 'America/New_York' }, days.body);
  });

  it('Asia/Kolkata hours start at :30 UTC and Asia/Kathmandu hours at :15 UTC', async () => {
    const start = Date.UTC(2026, 0, 1) > FROM ? Date.UTC(2026, 0, 1) : Math.floor((now - 10 * D) / D) * D;
    for (const [tz, minute] of [['Asia/Kolkata', 30], ['Asia/Kathmandu', 15]] as const) {
      const { body } = await get({ start: iso(start), end: iso(start + 7 * D), interval: 'hour', tz });
      const keys = Object.keys(body.requests);
      expect(keys.length).toBe(7 * 24 + 1);
      for (const k of keys) expect(new Date(k).getUTCMinutes()).toBe(minute);
      check({ start, end: start + 7 * D, interval: 'hour', tz }, body);
      const mins = await get({ start: iso(start + 3 * H + 7 * 60_000), end: iso(start + 9 * H + 7 * 60_000), interval: 'minute', tz });
      expect(Object.keys(mins.body.requests)).toHaveLength(360);
      check({ start: start + 3 * H + 7 * 60_000, end: start + 9 * H + 7 * 60_000, interval: 'minute', tz }, mins.body);
    }
  });

  it("Australia/Lord_Howe's 30-minute DST shifts: hours keyed by their first instant", async () => {
    for (const t of transitions.filter((x) => x.zone === 'Australia/Lord_Howe')) {
      const q = { start: t.at - 4 * H, end: t.at + 4 * H, interval: 'hour' as const, tz: 'Australia/Lord_Howe' };
      const { status, body } = await get({ start: iso(q.start), end: iso(q.end), interval: q.interval, tz: q.tz });
      expect(status).toBe(200);
      check(q, body);
      const keys = Object.keys(body.requests).map(Date.parse);
      // Before the shift hours start on one half hour, after it on the other; a 30-minute bucket joins them.
      const gaps = keys.slice(1).map((k, i) => k - keys[i]);
      expect(gaps.filter((g) => g === H / 2)).toHaveLength(1);
      const day = findDay('Australia/Lord_Howe', new Date(t.at - D), () => true);
      const days = await get({ start: iso(day.toMillis()), end: iso(day.toMillis() + 2 * D), interval: 'day', tz: q.tz });
      check({ start: day.toMillis(), end: day.toMillis() + 2 * D, interval: 'day', tz: q.tz }, days.body);
    }
  });

  it('month buckets across DST start at local midnight with the offset of that moment', async () => {
    const t = transitions.find((x) => x.zone === 'America/New_York' && x.at > FROM + 75 * D)!;
    const start = DateTime.fromMillis(t.at - 40 * D, { zone: 'America/New_York' }).startOf('month');
    const end = start.plus({ days: 179 });
    const { body } = await get({ start: start.toUTC().toISO()!, end: end.toUTC().toISO()!, interval: 'month', tz: 'America/New_York' });
    const keys = Object.keys(body.requests);
    expect(keys.every((k) => /-01T00:00:00-0[45]:00$/.test(k))).toBe(true);
    expect(new Set(keys.map((k) => k.slice(-6))).size).toBe(2);
    expect(Object.keys(body.costs).every((k) => /^\d{4}-\d{2}-01$/.test(k))).toBe(true);
    check({ start: start.toMillis(), end: end.toMillis(), interval: 'month', tz: 'America/New_York' }, body);
    totalsMatchBuckets(body);
  });

  it('events on a bucket edge land in the bucket that starts there; one millisecond earlier, in the one before', async () => {
    const edge = Math.floor((now - 3 * D) / H) * H;
    const extraApp = 'pm-edges';
    await stack.deploy(PROJECT, { name: 'edges', url: 'http://127.0.0.1:9/' });
    const rnd = prng(1);
    await insertRequestEvents(stack.pool, [
      { ts: new Date(edge), appId: extraApp, status: 200, async: false },
      { ts: new Date(edge - 1), appId: extraApp, status: 500, async: false },
      { ts: new Date(edge + H - 1), appId: extraApp, status: 404, async: false },
    ]);
    await insertCostEvents(stack.pool, [{ ...costAt(edge, extraApp, rnd), gpuUcents: 1n, cpuUcents: 2n, memoryUcents: 3n }]);
    const { body } = await get({ start: iso(edge - H), end: iso(edge + H), interval: 'hour' }, extraApp);
    expect(body.requests).toEqual({
      [iso(edge - H).replace('.000Z', 'Z')]: { total: 1, '2xx': 0, '4xx': 0, '5xx': 1, websocket_success: 0, websocket_error: 0, other: 0 },
      [iso(edge).replace('.000Z', 'Z')]: { total: 2, '2xx': 1, '4xx': 1, '5xx': 0, websocket_success: 0, websocket_error: 0, other: 0 },
    });
    expect(body.costs[iso(edge).replace('.000Z', 'Z')]).toMatchObject({ gpu_cost_cents: 0.000001, cpu_cost_cents: 0.000002, memory_cost_cents: 0.000003, total_cost_cents: 0.000006 });
    // end is exclusive: a period ending exactly at the edge does not report the bucket starting there.
    const before = await get({ start: iso(edge - H), end: iso(edge), interval: 'hour' }, extraApp);
    expect(Object.keys(before.body.requests)).toEqual([iso(edge - H).replace('.000Z', 'Z')]);
    // A start inside a bucket reports that bucket whole.
    const inside = await get({ start: iso(edge + 30 * 60_000), end: iso(edge + 31 * 60_000), interval: 'hour' }, extraApp);
    expect(inside.body.requests[iso(edge).replace('.000Z', 'Z')].total).toBe(2);
  });

  it('totals equal the sum of the buckets on the integers, and the raw events of the reported span', async () => {
    for (const [interval, len, tz] of [['day', 180 * D, 'America/New_York'], ['hour', 7 * D, 'Asia/Kolkata'], ['minute', 6 * H, 'Asia/Kathmandu'], ['month', 180 * D, 'Europe/Berlin']] as const) {
      const start = new Date(Math.max(FROM + H, now - 100 * D));
      const end = new Date(start.getTime() + len);
      const rows = await queryDashboardBuckets(stack.pool, { appId: APP, start, end, interval, tz });
      const raw = await queryDashboardBuckets(stack.pool, { appId: APP, start, end, interval, tz }, { fromRaw: true });
      expect(raw).toEqual(rows);
      const t = sumBuckets(rows);
      // The reported span runs from the first bucket's start to the last bucket's end.
      const last = rows[rows.length - 1].bucket;
      const reach = { minute: 2 * 60_000, hour: 2 * H, day: 2 * D, month: 32 * D }[interval];
      const spanEnd = (await queryDashboardBuckets(stack.pool, { appId: APP, start: last, end: new Date(last.getTime() + reach), interval, tz }))[1].bucket;
      const direct = await stack.pool.query(
        `SELECT coalesce(sum(gpu_ucents), 0)::text AS gpu, coalesce(sum(cpu_ucents), 0)::text AS cpu, coalesce(sum(mem_ucents), 0)::text AS mem,
                coalesce(sum(running_time_ms), 0)::text AS ms FROM cost_events WHERE app_id = $1 AND ts >= $2 AND ts < $3`,
        [APP, rows[0].bucket, spanEnd]);
      const n = await stack.pool.query('SELECT count(*)::text AS n FROM request_events WHERE app_id = $1 AND ts >= $2 AND ts < $3', [APP, rows[0].bucket, spanEnd]);
      expect(t.gpu_ucents).toBe(BigInt(direct.rows[0].gpu));
      expect(t.cpu_ucents).toBe(BigInt(direct.rows[0].cpu));
      expect(t.mem_ucents).toBe(BigInt(direct.rows[0].mem));
      expect(t.running_time_ms).toBe(BigInt(direct.rows[0].ms));
      expect(t.n_total).toBe(BigInt(n.rows[0].n));
      expect(t.n_total).toBe(t.n_2xx + t.n_4xx + t.n_5xx + t.n_ws_ok + t.n_ws_err + t.n_other);
      const { body } = await get({ start: start.toISOString(), end: end.toISOString(), interval, tz });
      totalsMatchBuckets(body);
      expect(body.request_totals.total).toBe(Number(t.n_total));
    }
  });

  it('matches the luxon oracle over random periods, intervals and zones', async () => {
    const caps: Record<Unit, number> = { minute: 6 * H, hour: 7 * D, day: 180 * D, month: 180 * D };
    const startArb = fc.oneof(
      fc.integer({ min: FROM + H, max: TO - 7 * D }),
      fc.tuple(fc.constantFrom(...transitions.filter((t) => t.at > FROM + 8 * D && t.at < TO - 8 * D)), fc.integer({ min: -5 * D, max: D }))
        .map(([t, off]) => Math.max(FROM + H, t.at + off)),
    );
    const align = fc.constantFrom(1, 60_000, 15 * 60_000, H);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Unit>('minute', 'hour', 'day', 'day', 'month'), fc.constantFrom(...ZONES), startArb, fc.double({ min: 0.0001, max: 1, noNaN: true }), align,
        async (interval, tz, rawStart, frac, unit) => {
          const start = Math.floor(rawStart / unit) * unit;
          let len = Math.max(1, Math.floor(caps[interval] * (interval === 'day' || interval === 'month' ? Math.min(frac, 0.25) : frac)));
          if (frac > 0.95) len = caps[interval];
          const end = Math.min(start + len, TO);
          if (end <= start) return;
          expect(offsetsOnQuarterHours(tz, start - 32 * D, end + 32 * D)).toBe(true);
          const { status, body } = await get({ start: iso(start), end: iso(end), interval, tz });
          expect(status).toBe(200);
          check({ start, end, interval, tz }, body);
          totalsMatchBuckets(body);
        },
      ),
      { numRuns: 200, seed: 20261122, endOnFailure: true },
    );
  }, 90_000);
});

describe('dashboard-metrics errors', () => {
  it('401 without a token, 403 for another project, 404 for an unknown app', async () => {
    const url = `${stack.baseUrl}/v2/projects/${PROJECT}/apps/${APP}/dashboard-metrics`;
    expect((await fetch(url)).status).toBe(401);
    const other = await stack.token('someone-else');
    const forbidden = await fetch(url, { headers: authHeaders(other) });
    expect(forbidden.status).toBe(403);
    const missing = await get({}, 'pm-nope');
    expect(missing.status).toBe(404);
    expect(missing.body.message).toMatch(/pm-nope/);
    // Another project's app is unknown in this one.
    await stack.deploy('someone-else', { name: 'theirs', url: 'http://127.0.0.1:9/' });
    expect((await get({}, 'someone-else-theirs')).status).toBe(404);
  });

  it('400 with a message naming the parameter and the rule', async () => {
    const s = iso(now - D);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ interval: 'week' }, /^interval: must be one of minute, hour, day, month/],
      [{ month: 'next' }, /^month: must be current or previous/],
      [{ start: s }, /^end: must be sent together with start/],
      [{ end: s }, /^start: must be sent together with end/],
      [{ start: '2026-01-01', end: s }, /^start: must be an RFC 3339 timestamp/],
      [{ start: s, end: s }, /^end: must be after start/],
      [{ start: iso(now - 181 * D), end: iso(now - 180.5 * D) }, /^start: must not be more than 180 days in the past/],
      [{ start: iso(now - D), end: iso(now - D + 6 * H + 1), interval: 'minute' }, /^interval: interval=minute allows a period of at most 6 hours/],
      [{ start: iso(now - 10 * D), end: iso(now - 2 * D), interval: 'hour' }, /^interval: interval=hour allows a period of at most 7 days/],
      [{ interval: 'hour' }, /^interval: interval=hour requires start and end/],
      [{ tz: 'Mars/Olympus_Mons' }, /^tz: must be an IANA time zone name/],
      [{ foo: '1' }, /^foo: unknown query parameter/],
    ];
    for (const [q, re] of cases) {
      const { status, body } = await get(q);
      expect({ q, status }).toEqual({ q, status: 400 });
      expect(body.message).toMatch(re);
    }
    const res = await fetch(`${stack.baseUrl}/v2/projects/${PROJECT}/apps/${APP}/dashboard-metrics?interval=day&interval=hour`, { headers: authHeaders(token) });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toMatch(/^interval: must be given at most once/);
    const plus = await fetch(`${stack.baseUrl}/v2/projects/${PROJECT}/apps/${APP}/dashboard-metrics?start=2026-11-20T00:00:00+05:30&end=2026-11-21T00:00:00%2B05:30`, { headers: authHeaders(token) });
    expect((await plus.json()).message).toMatch(/%2B/);
  });
});
