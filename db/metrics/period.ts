import { DateTime, IANAZone } from 'luxon';

// Validation of the dashboard-metrics query string (interface.md sections 4.1 and 8). Every
// violation is a PeriodError whose message starts with the parameter it concerns and states the rule.

export const INTERVALS = ['minute', 'hour', 'day', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Longest period (end - start) each interval accepts. */
export const INTERVAL_CAPS_MS: Record<Interval, number> = {
  minute: 6 * HOUR_MS,
  hour: 7 * DAY_MS,
  day: 180 * DAY_MS,
  month: 180 * DAY_MS,
};
const CAP_TEXT: Record<Interval, string> = { minute: '6 hours', hour: '7 days', day: '180 days', month: '180 days' };

/** `start` may lie at most this far before now. */
export const MAX_LOOKBACK_MS = 180 * DAY_MS;

export const QUERY_PARAMETERS = ['month', 'start', 'end', 'interval', 'tz'] as const;

export class PeriodError extends Error {
  constructor(readonly parameter: string, rule: string) {
    super(`${parameter}: ${rule}`);
    this.name = 'PeriodError';
  }
}

export interface Period {
  /** Inclusive start of the requested period (an instant, millisecond precision). */
  start: Date;
  /** Exclusive end of the requested period. */
  end: Date;
  interval: Interval;
  /** IANA zone name to hand to PostgreSQL and luxon (see normalizeTimeZone). */
  tz: string;
  /** `start_date` / `end_date` of the response: the parameters as sent, or the billing month's first and last moment. */
  startDate: string;
  endDate: string;
  source: 'range' | 'month';
}

/** A short, printable rendering of a rejected value (hostile input can be megabytes of anything). */
function shown(value: string): string {
  const cut = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  return JSON.stringify(cut);
}

// RFC 3339 section 5.6 date-time: full-date "T" full-time, with a mandatory offset. The separator and
// Z may be lower case; seconds are required; fractions of any length (digits past milliseconds are
// truncated, as PostgreSQL and luxon keep at most microseconds/milliseconds anyway).
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;
// A '+' offset that was not URL-encoded arrives as a space.
const PLUS_AS_SPACE = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})? \d{2}:\d{2}$/;

/** Parses an RFC 3339 timestamp strictly; returns null when it is not one (or not a real date). */
export function parseRfc3339(value: string): Date | null {
  if (value.length > 40) return null;
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [, , mo, d, h, mi, s, , z, oh, om] = m;
  if (+mo < 1 || +mo > 12 || +d < 1 || +h > 23 || +mi > 59 || +s > 59) return null;
  if (z.length > 1 && (+oh > 23 || +om > 59)) return null;
  const dt = DateTime.fromISO(value.replace(/[tz]/g, (c) => c.toUpperCase()), { setZone: true });
  // luxon rejects impossible days such as 2026-02-30.
  if (!dt.isValid) return null;
  return dt.toJSDate();
}

function rfc3339Rule(value: string): string {
  const hint = PLUS_AS_SPACE.test(value) ? "; a '+' in the offset must be URL-encoded as %2B" : '';
  return `must be an RFC 3339 timestamp with an offset, such as 2026-03-08T00:00:00Z or 2026-03-08T00:00:00-05:00 (got ${shown(value)})${hint}`;
}

// Names that PostgreSQL reads as a fixed-offset abbreviation before it looks for a zone, while the IANA
// zone of the same name observes DST. tzdata 2024b made them links to these zones.
const PG_ABBREVIATION_ZONES: Record<string, string> = {
  CET: 'Europe/Brussels',
  MET: 'Europe/Brussels',
  EET: 'Europe/Athens',
  WET: 'Europe/Lisbon',
};

const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,3}$/;

/** The zone name to use in SQL and luxon, or null when `tz` is not an IANA zone name. */
export function normalizeTimeZone(tz: string): string | null {
  if (tz.length > 64 || !ZONE_NAME.test(tz) || !IANAZone.isValidZone(tz)) return null;
  return PG_ABBREVIATION_ZONES[tz.toUpperCase()] ?? tz;
}

function single(query: Record<string, unknown>, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw new PeriodError(name, `must be given at most once (got ${v.length} values)`);
  if (typeof v !== 'string') throw new PeriodError(name, 'must be a string');
  return v;
}

function iso(d: Date): string {
  return d.toISOString().replace('.000Z', 'Z');
}

/**
 * Validates the query string of GET .../dashboard-metrics and resolves the period. The period is
 * [start, end): `end` is exclusive. With `month`, it is the UTC billing month.
 */
export function parsePeriod(query: Record<string, unknown>, now: Date = new Date()): Period {
  for (const name of Object.keys(query)) {
    if (!(QUERY_PARAMETERS as readonly string[]).includes(name)) {
      throw new PeriodError(name, `unknown query parameter; the parameters are ${QUERY_PARAMETERS.join(', ')}`);
    }
  }
  const monthRaw = single(query, 'month');
  const startRaw = single(query, 'start');
  const endRaw = single(query, 'end');
  const intervalRaw = single(query, 'interval');
  const tzRaw = single(query, 'tz');

  let interval: Interval = 'day';
  if (intervalRaw !== undefined) {
    if (!(INTERVALS as readonly string[]).includes(intervalRaw)) {
      throw new PeriodError('interval', `must be one of ${INTERVALS.join(', ')} (got ${shown(intervalRaw)})`);
    }
    interval = intervalRaw as Interval;
  }

  let tz = 'UTC';
  if (tzRaw !== undefined) {
    const zone = normalizeTimeZone(tzRaw);
    if (!zone) throw new PeriodError('tz', `must be an IANA time zone name such as America/New_York or UTC (got ${shown(tzRaw)})`);
    tz = zone;
  }

  if (startRaw !== undefined || endRaw !== undefined) {
    if (startRaw === undefined) throw new PeriodError('start', 'must be sent together with end');
    if (endRaw === undefined) throw new PeriodError('end', 'must be sent together with start');
    const start = parseRfc3339(startRaw);
    if (!start) throw new PeriodError('start', rfc3339Rule(startRaw));
    const end = parseRfc3339(endRaw);
    if (!end) throw new PeriodError('end', rfc3339Rule(endRaw));
    if (end.getTime() <= start.getTime()) throw new PeriodError('end', 'must be after start (the period is [start, end), end exclusive)');
    if (start.getTime() < now.getTime() - MAX_LOOKBACK_MS) {
      throw new PeriodError('start', 'must not be more than 180 days in the past');
    }
    if (end.getTime() - start.getTime() > INTERVAL_CAPS_MS[interval]) {
      throw new PeriodError('interval', `interval=${interval} allows a period of at most ${CAP_TEXT[interval]}; start to end is longer`);
    }
    // The strings are echoed as sent: start_date/end_date say what the caller asked for.
    return { start, end, interval, tz, startDate: startRaw, endDate: endRaw, source: 'range' };
  }

  if (interval === 'minute' || interval === 'hour') {
    throw new PeriodError('interval', `interval=${interval} requires start and end: a billing month is longer than its ${CAP_TEXT[interval]} maximum`);
  }
  let month = 'current';
  if (monthRaw !== undefined) {
    if (monthRaw !== 'current' && monthRaw !== 'previous') {
      throw new PeriodError('month', `must be current or previous (got ${shown(monthRaw)})`);
    }
    month = monthRaw;
  }
  const thisMonth = DateTime.fromJSDate(now, { zone: 'UTC' }).startOf('month');
  const first = month === 'current' ? thisMonth : thisMonth.minus({ months: 1 });
  const next = first.plus({ months: 1 });
  return {
    start: first.toJSDate(),
    end: next.toJSDate(),
    interval,
    tz,
    startDate: iso(first.toJSDate()),
    // The last representable moment of the month at our millisecond precision.
    endDate: next.minus({ milliseconds: 1 }).toUTC().toISO()!,
    source: 'month',
  };
}
