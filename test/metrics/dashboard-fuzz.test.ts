import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startStack, type Stack } from '../helpers/stack.js';

// Thousands of random and hostile query strings (and a few hostile paths): the endpoint answers each
// with a 2xx or 4xx and a JSON body, never a 5xx.

let stack: Stack;
let token: string;
let port: number;
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

function raw(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  stack = await startStack();
  token = await stack.token('pf');
  await stack.deploy('pf', { name: 'fz', url: 'http://127.0.0.1:9/' });
  port = new URL(stack.baseUrl).port as unknown as number;
});

afterAll(async () => {
  agent.destroy();
  await stack?.close();
});

const now = Date.now();
const D = 86_400_000;
const KEYS = ['month', 'start', 'end', 'interval', 'tz', 'Month', 'start[]', 'tz[0]', '__proto__', 'constructor', 'toString', '', 'a.b', 'hasOwnProperty'];
const VALUES = ['current', 'previous', 'minute', 'hour', 'day', 'month', 'UTC', 'America/New_York', 'Australia/Lord_Howe', 'CET', 'EST5EDT',
  new Date(now - D).toISOString(), new Date(now).toISOString(), new Date(now - 179 * D).toISOString(), new Date(now + 3 * 3_600_000).toISOString(),
  '2026-11-20T00:00:00+05:30', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '9999-12-31T23:59:59.999999999-23:59', '1970-01-01T00:00:00Z',
  '%00', '%FF%FE', '%C0%AF', '%E2%80%AE', '%F0%9F%92%A9', '%ED%A0%80', 'null', 'undefined', '[]', '{}', '-1', 'NaN', 'Infinity', "'; DROP TABLE apps; --",
  'posix/UTC', '../../etc/localtime', 'Etc/GMT+14', 'Etc/GMT-14', 'Pacific/Kiritimati', 'SystemV/EST5', 'x'.repeat(3000), '%'.repeat(10), '+', '%2B', ''];

// Raw bytes a client could put on the request line: anything visible as is, the rest percent-encoded.
const wire = (v: string) => v.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c).replace(/%25/g, '%'));
const keyArb = fc.oneof(fc.constantFrom(...KEYS).map(wire), fc.string({ maxLength: 12 }).map(encodeURIComponent));
const valueArb = fc.oneof(
  fc.constantFrom(...VALUES).map(wire),
  fc.string({ unit: 'binary', maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map(encodeURIComponent),
  fc.integer({ min: -1e12, max: 1e13 }).map((n) => encodeURIComponent(new Date(now + n).toISOString())),
);
const queryArb = fc.array(fc.tuple(keyArb, valueArb, fc.constantFrom('=', '', '==')), { maxLength: 7 })
  .map((pairs) => pairs.map(([k, v, eq]) => (eq === '' ? k : `${k}${eq}${v}`)).join(fc.sample(fc.constantFrom('&', '&&', ';'), 1)[0]));

describe('dashboard-metrics fuzz', () => {
  it('never answers 5xx to thousands of random and hostile query strings', async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(queryArb, async (qs) => {
        const res = await raw(`/v2/projects/pf/apps/pf-fz/dashboard-metrics?${qs}`);
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        expect(res.status, `${res.status} for ?${qs.slice(0, 300)}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
        const body = JSON.parse(res.body);
        if (res.status >= 400) expect(typeof body.message).toBe('string');
      }),
      { numRuns: 4000, seed: 4 },
    );
    // The generator reaches both outcomes, not only rejections.
    expect(seen.get(200) ?? 0).toBeGreaterThan(50);
    expect(seen.get(400) ?? 0).toBeGreaterThan(1000);
  }, 85_000);

  it('hostile paths and repeated parameters', async () => {
    for (const path of [
      '/v2/projects/pf/apps/%00/dashboard-metrics', '/v2/projects/pf/apps/pf-fz%00/dashboard-metrics', '/v2/projects/pf/apps/%FF/dashboard-metrics',
      `/v2/projects/pf/apps/${'a'.repeat(5000)}/dashboard-metrics`, '/v2/projects/pf/apps/%F0%9F%92%A9/dashboard-metrics',
      '/v2/projects/pf/apps/pf-fz/dashboard-metrics?interval=day&interval=day', '/v2/projects/pf/apps/pf-fz/dashboard-metrics?tz=UTC&tz=UTC&tz=UTC',
      '/v2/projects/pf/apps/pf-fz/dashboard-metrics?start=%00&end=%00', `/v2/projects/pf/apps/pf-fz/dashboard-metrics?tz=${'A/'.repeat(3000)}`,
      `/v2/projects/pf/apps/pf-fz/dashboard-metrics?${'interval=day&'.repeat(500)}`,
    ]) {
      const res = await raw(path);
      expect(res.status, `${path.slice(0, 100)} -> ${res.body.slice(0, 200)}`).toBeLessThan(500);
    }
  });
});
