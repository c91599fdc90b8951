import { Type } from '@sinclair/typebox';

const count = (description: string) => Type.Integer({ minimum: 0, description });
const cents = (description: string) => Type.Number({ minimum: 0, description: `${description} In fractional cents (stored as integer micro-cents; value = micro-cents / 1e6).` });

export const RequestsEntry = Type.Object(
  {
    total: count('All requests in the bucket.'),
    '2xx': count('Responses with 2xx status.'),
    '4xx': count('Responses with 4xx status.'),
    '5xx': count('Responses with 5xx status.'),
    websocket_success: count('WebSocket closes with close code 1000 to 1001.'),
    websocket_error: count('WebSocket closes with close code 1002 to 1999.'),
    other: count('Anything outside the above ranges, including requests with no status.'),
  },
  { $id: 'RequestsEntry', title: 'Requests entry', additionalProperties: false },
);

export const CostsEntry = Type.Object(
  {
    gpu_cost_cents: cents('GPU spend.'),
    cpu_cost_cents: cents('CPU spend.'),
    memory_cost_cents: cents('Memory spend.'),
    total_cost_cents: cents('Total spend (GPU + CPU + memory).'),
    total_running_time_ms: count('Container running time, in milliseconds, that the spend covers.'),
    unique_container_count: Type.Integer({ description: 'Present in the shape but never populated (always 0).' }),
  },
  { $id: 'CostsEntry', title: 'Costs entry', additionalProperties: false },
);

export const DashboardMetrics = Type.Object(
  {
    requests: Type.Record(Type.String(), RequestsEntry, {
      description: 'Request counts per bucket, keyed by bucket start (RFC 3339), ascending, zero-filled. Day and month keys are local midnight in `tz` with its offset; minute and hour keys are UTC.',
    }),
    request_totals: RequestsEntry,
    costs: Type.Record(Type.String(), CostsEntry, {
      description: 'Spend per bucket, ascending, zero-filled. Keys are YYYY-MM-DD (local date in `tz`) for day and month, RFC 3339 UTC for minute and hour.',
    }),
    cost_totals: CostsEntry,
    start_date: Type.String({ description: 'The `start` parameter as sent, or the first moment of the billing month (UTC).' }),
    end_date: Type.String({ description: 'The `end` parameter as sent (exclusive), or the last moment of the billing month (UTC, millisecond precision).' }),
    interval: Type.String({ enum: ['minute', 'hour', 'day', 'month'], description: 'The bucket size used.' }),
  },
  { $id: 'DashboardMetrics', title: 'Dashboard metrics' },
);

export const DashboardMetricsParams = Type.Object({
  project_id: Type.String({ minLength: 1, maxLength: 200 }),
  app_id: Type.String({ minLength: 1, maxLength: 200 }),
});

// Declared for the OpenAPI document only: no type keyword, so any value (repeated parameters arrive as
// arrays) reaches db/metrics/period.ts, which names the parameter and the rule in its 400 message.
const param = (description: string) => Type.Optional(Type.Unsafe<unknown>({ description }));

export const DashboardMetricsQuery = Type.Object(
  {
    month: param('`current` or `previous` (default `current`): a whole UTC billing month. Ignored when `start` and `end` are sent.'),
    start: param('RFC 3339 start of the period (inclusive), sent together with `end`; takes precedence over `month`; at most 180 days in the past.'),
    end: param('RFC 3339 end of the period (exclusive), sent together with `start`.'),
    interval: param('`minute` (period at most 6 hours), `hour` (7 days), `day` (180 days, default) or `month` (180 days). `minute` and `hour` need `start` and `end`.'),
    tz: param('IANA time zone the buckets fall in (default UTC).'),
  },
  { additionalProperties: true },
);
