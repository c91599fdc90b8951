import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EventRecorder } from '../../db/metrics/event-recorder.js';

export interface ApiMetrics {
  registry: Registry;
  runsStarted: Counter<'mode'>;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ApiMetrics;
  }
}

/**
 * Prometheus metrics of the API at GET /metrics: request rate and latency by route template and
 * status, runs started, and the event recorder's buffer and drops. One registry per app instance,
 * so several APIs in one process (tests) never share or clash.
 */
const metricsPlugin: FastifyPluginAsync<{ recorder: EventRecorder }> = async (app, opts) => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({ name: 'runhook_http_requests_total', help: 'HTTP requests answered, by route template and status', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'runhook_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route template and status',
    labelNames,
    // Sub-millisecond to the long sync runs: the run path's own overhead sits at the low end.
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  const runsStarted = new Counter({ name: 'runhook_runs_started_total', help: 'Runs started: sync calls made to an app, async runs accepted (202)', labelNames: ['mode'], registers: [registry] });
  new Gauge({
    name: 'runhook_event_buffer_depth',
    help: 'Request and cost events held in memory, not yet written to PostgreSQL',
    registers: [registry],
    collect() {
      this.set(opts.recorder.stats().buffered);
    },
  });
  new Counter({
    name: 'runhook_events_dropped_total',
    help: 'Events dropped because the in-memory bound was exceeded (PostgreSQL unreachable for long)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(opts.recorder.stats().dropped);
    },
  });
  new Counter({
    name: 'runhook_events_rejected_total',
    help: 'Events refused when recorded because PostgreSQL could never store them (invalid time or number); a bug if not 0',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(opts.recorder.stats().rejected);
    },
  });
  new Counter({
    name: 'runhook_events_written_total',
    help: 'Request and cost events written to PostgreSQL',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(opts.recorder.stats().written);
    },
  });

  app.decorate('metrics', { registry, runsStarted });
  app.addHook('onResponse', async (request, reply) => {
    // Route templates, never raw URLs: label sets stay bounded whatever the callers send.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });

  app.get('/metrics', {
    schema: { tags: ['health'], summary: 'Prometheus metrics of this API process (text exposition format)', security: [] },
    logLevel: 'warn',
  }, async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
};

export default fp(metricsPlugin, { name: 'metrics' });
