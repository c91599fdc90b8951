import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { normalizeTimeZone, parsePeriod, parseRfc3339, PeriodError } from '../../db/metrics/period.js';

const NOW = new Date('2026-11-22T15:00:00Z');
const D = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

function error(q: Record<string, unknown>): PeriodError {
  try {
    parsePeriod(q, NOW);
  } catch (err) {
    if (err instanceof PeriodError) return err;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(q)}`);
}

describe('parsePeriod', () => {
  it('defaults: current UTC billing month, by day, UTC', () => {
    const p = parsePeriod({}, NOW);
    expect(p).toEqual({
      start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z'), interval: 'day', tz: 'UTC',
      startDate: '2026-11-01T00:00:00Z', endDate: '2026-11-30T23:59:59.999Z', source: 'month',
    });
  });

  it('previous month across a year boundary; month ignored when start and end are sent', () => {
    const jan = new Date('2027-01-10T00:00:00Z');
    const p = parsePeriod({ month: 'previous', interval: 'month' }, jan);
    expect([p.startDate, p.endDate]).toEqual(['2026-12-01T00:00:00Z', '2026-12-31T23:59:59.999Z']);
    const r = parsePeriod({ month: 'garbage', start: '2026-11-20T00:00:00Z', end: '2026-11-21T00:00:00-05:00' }, NOW);
    expect(r.source).toBe('range');
    expect(r.startDate).toBe('2026-11-20T00:00:00Z');
    expect(r.endDate).toBe('2026-11-21T00:00:00-05:00');
    expect(r.end).toEqual(new Date('2026-11-21T05:00:00Z'));
  });

  it('caps per interval: exactly the cap is allowed, one millisecond more is not', () => {
    const s = NOW.getTime() - 170 * D;
    for (const [interval, cap, text] of [['minute', 6 * 3_600_000, '6 hours'], ['hour', 7 * D, '7 days'], ['day', 180 * D, '180 days'], ['month', 180 * D, '180 days']] as const) {
      const start = interval === 'day' || interval === 'month' ? NOW.getTime() - 180 * D + 1 : s;
      expect(parsePeriod({ start: iso(start), end: iso(start + cap), interval }, NOW).interval).toBe(interval);
      expect(error({ start: iso(start), end: iso(start + cap + 1), interval }).message)
        .toBe(`interval: interval=${interval} allows a period of at most ${text}; start to end is longer`);
    }
  });

  it('start at most 180 days back', () => {
    const limit = NOW.getTime() - 180 * D;
    expect(parsePeriod({ start: iso(limit), end: iso(limit + D) }, NOW).start.getTime()).toBe(limit);
    expect(error({ start: iso(limit - 1), end: iso(limit + D) }).message).toBe('start: must not be more than 180 days in the past');
  });

  it('rules and their messages', () => {
    const s = '2026-11-20T00:00:00Z';
    const e = '2026-11-21T00:00:00Z';
    expect(error({ start: s }).message).toBe('end: must be sent together with start');
    expect(error({ end: e }).message).toBe('start: must be sent together with end');
    expect(error({ start: e, end: s }).message).toMatch(/^end: must be after start/);
    expect(error({ start: s, end: s }).message).toMatch(/^end: must be after start/);
    expect(error({ interval: 'minute' }).message).toBe('interval: interval=minute requires start and end: a billing month is longer than its 6 hours maximum');
    expect(error({ interval: 'hour', month: 'previous' }).message).toMatch(/^interval: interval=hour requires start and end/);
    expect(error({ interval: 'Day' }).message).toBe('interval: must be one of minute, hour, day, month (got "Day")');
    expect(error({ interval: '' }).message).toMatch(/^interval: must be one of/);
    expect(error({ month: 'last' }).message).toBe('month: must be current or previous (got "last")');
    expect(error({ tz: 'Nowhere/City' }).message).toMatch(/^tz: must be an IANA time zone name/);
    expect(error({ tz: '+05:00' }).message).toMatch(/^tz: /);
    expect(error({ tz: 'x'.repeat(100_000) }).message.length).toBeLessThan(200);
    expect(error({ interval: ['day', 'hour'] }).message).toBe('interval: must be given at most once (got 2 values)');
    expect(error({ timezone: 'UTC' }).message).toMatch(/^timezone: unknown query parameter; the parameters are month, start, end, interval, tz$/);
    expect(error({ start: '2026-11-20T00:00:00 05:30', end: e }).message).toMatch(/^start: must be an RFC 3339 timestamp.*URL-encoded as %2B$/);
  });

  it('RFC 3339 strictly', () => {
    for (const ok of ['2026-11-20T00:00:00Z', '2026-11-20t00:00:00z', '2026-11-20T00:00:00.123456789+05:45', '2026-11-20T23:59:59-00:00', '2024-02-29T12:00:00Z']) {
      expect(parseRfc3339(ok), ok).not.toBeNull();
    }
    for (const bad of ['2026-11-20', '2026-11-20T00:00Z', '2026-11-20T00:00:00', '2026-11-20 00:00:00Z', '2026-02-30T00:00:00Z', '2026-11-20T24:00:00Z',
      '2026-11-20T00:00:60Z', '2026-13-01T00:00:00Z', '2026-11-20T00:00:00+24:00', '2026-11-20T00:00:00+0530', '20261120T000000Z', '+002026-11-20T00:00:00Z',
      '2026-11-20T00:00:00.Z', '１２３４-11-20T00:00:00Z', '2025-02-29T00:00:00Z', 'now', '']) {
      expect(parseRfc3339(bad), bad).toBeNull();
    }
    expect(parseRfc3339('2026-11-20T00:00:00.9999Z')!.toISOString()).toBe('2026-11-20T00:00:00.999Z');
  });

  it('time zones: IANA names in any case; names PostgreSQL would read as fixed abbreviations are mapped', () => {
    expect(normalizeTimeZone('America/New_York')).toBe('America/New_York');
    expect(normalizeTimeZone('asia/kolkata')).toBe('asia/kolkata');
    expect(normalizeTimeZone('CET')).toBe('Europe/Brussels');
    expect(normalizeTimeZone('UTC')).toBe('UTC');
    for (const bad of ['', 'UTC+5', '+05:00', 'posix/America/New_York', '../etc/passwd', 'America/New_York\u0000', 'Europe/Berlin ']) expect(normalizeTimeZone(bad), bad).toBeNull();
  });

  it('never throws anything but a PeriodError, whatever the input', () => {
    const value = fc.oneof(fc.string({ unit: 'binary', maxLength: 60 }), fc.array(fc.string(), { maxLength: 3 }), fc.constantFrom('minute', 'hour', 'day', 'month', 'current', 'previous', 'UTC', 'America/New_York', iso(NOW.getTime() - D), iso(NOW.getTime())));
    fc.assert(fc.property(fc.dictionary(fc.constantFrom('month', 'start', 'end', 'interval', 'tz', 'x'), value), (q) => {
      try {
        const p = parsePeriod(q, NOW);
        expect(p.end.getTime()).toBeGreaterThan(p.start.getTime());
      } catch (err) {
        expect(err).toBeInstanceOf(PeriodError);
      }
    }), { numRuns: 3000 });
  });
});
