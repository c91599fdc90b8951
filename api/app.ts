import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import sensible from '@fastify/sensible';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Client } from '@temporalio/client';
import type { Agent } from 'undici';
import type { Pool } from 'pg';
import type { Config } from '../config/config.js';
import { createAppDispatcher } from '../lib/app-client.js';
import repositories from './plugins/repositories.js';
import { RunLog } from './run-log.js';
import { createRunEvents, type RunEvents } from './run-events.js';
import { EventRecorder } from '../db/metrics/event-recorder.js';
import { priceTable } from '../db/metrics/cost.js';
import type { WebhookSummaryLookup } from './run-view.js';
import runsRoutes from './routes/runs.js';
import auth from './plugins/auth.js';
import healthRoute from './routes/health.js';
import runRoute from './routes/run.js';
import websocket from '@fastify/websocket';
import websocketProxy from './routes/websocket-proxy.js';
import dashboardMetricsRoute from './routes/dashboard-metrics.js';
import webhooksPlugin from './plugins/webhooks.js';
import webhookRoutes from './routes/webhooks.js';
import payloadCodecRoute from './routes/payload-codec.js';
import metricsPlugin from './plugins/metrics.js';
import runStartsPlugin from './plugins/run-starts.js';
import appsRoutes from './routes/apps.js';
import dashboardPage from './routes/dashboard-page.js';
import { webhooksRepository } from '../db/repositories/webhooks.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    temporal: Client;
    appDispatcher: Agent;
    runLog: RunLog;
    events: RunEvents;
    /** Webhook delivery state per run, for run views (replaced by the webhooks feature). */
    webhookSummaries: WebhookSummaryLookup;
  }
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08003', '08006', '53300']);

/** PostgreSQL down, restarting or out of connections: a retryable 503, not an internal error. */
function isDatabaseUnavailable(err: Error & { code?: string }): boolean {
  return (err.code !== undefined && UNAVAILABLE_CODES.has(err.code)) || /Connection terminated/.test(err.message);
}

export interface AppDeps {
  config: Config;
  pool: Pool;
  temporal: Client;
  logger?: FastifyServerOptions['logger'];
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: deps.config.runBodyLimitBytes,
    // Connections from callers are many and short; keep them alive between calls.
    keepAliveTimeout: 65_000,
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, allErrors: false } },
    genReqId: () => crypto.randomUUID(),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('config', deps.config);
  app.decorate('temporal', deps.temporal);
  const dispatcher = createAppDispatcher();
  app.decorate('appDispatcher', dispatcher);
  app.addHook('onClose', async () => dispatcher.close());

  // An empty body with a JSON content type (common from HTTP clients on POST .../cancel) is no body.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      done(Object.assign(new Error(`request body is not valid JSON: ${(err as Error).message}`), { statusCode: 400 }), undefined);
    }
  });
  await app.register(sensible);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'runhook API',
        version: '1.0.0',
        description: 'Run API (/v4) and management API (/v2) of runhook, a self-hostable run gateway for serverless apps.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Service account token' } } },
      security: [{ bearer: [] }],
      tags: [
        { name: 'runs', description: 'Run apps synchronously or asynchronously' },
        { name: 'webhooks', description: 'Webhook delivery log and redelivery of a run' },
        { name: 'metrics', description: 'Dashboard metrics of an app' },
        { name: 'apps', description: "A project's apps" },
        { name: 'health', description: 'Service health' },
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // Every error leaves as {"message"} with the right status; internals are logged, not returned.
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown; validationContext?: string }, request, reply) => {
    let status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    let message = err.message;
    if (err.validation) {
      status = 400;
      message = `invalid ${err.validationContext ?? 'request'}: ${err.message.replace(/^(querystring|params|body|headers)\/?/, '')}`;
    }
    if (isDatabaseUnavailable(err)) {
      status = 503;
      message = 'database unavailable, try again shortly';
    }
    if (status >= 500 && !('expose' in err)) {
      request.log.error({ err }, 'request failed');
      if (!err.statusCode) message = 'internal error';
    }
    return reply.code(status).send({ message });
  });
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ message: `no route for ${request.method} ${request.url.split('?')[0]}` }));

  await app.register(repositories, { pool: deps.pool });
  const runLog = new RunLog(app.repos.runs, app.log);
  app.decorate('runLog', runLog);
  const webhookDeliveries = webhooksRepository(deps.pool);
  app.decorate('webhookSummaries', ((runIds) => webhookDeliveries.summaries(runIds)) as WebhookSummaryLookup);
  app.addHook('onClose', async () => runLog.close());
  const recorder = new EventRecorder(deps.pool, {
    onError: (err) => app.log.warn({ err }, 'event write failed; retrying'),
    onRejected: (reason) => app.log.error({ reason }, 'event not recorded: PostgreSQL could not store it'),
  });
  app.decorate('events', createRunEvents(recorder, priceTable(deps.config), deps.config.eventRecording));
  // onClose runs after the server stopped accepting, so every recorded event gets written.
  app.addHook('onClose', async () => {
    await recorder.close().catch((err) => app.log.error({ err }, 'events not written at shutdown'));
  });
  // Before auth: its onRequest hook marks upgrade requests, so a rejected upgrade's socket is closed.
  await app.register(websocket, { options: { maxPayload: deps.config.runBodyLimitBytes } });
  await app.register(metricsPlugin, { recorder });
  await app.register(auth);
  await app.register(healthRoute);
  await app.register(webhooksPlugin, { pool: deps.pool });
  await app.register(runStartsPlugin);
  await app.register(runRoute);
  await app.register(runsRoutes);
  await app.register(webhookRoutes);
  await app.register(payloadCodecRoute);
  await app.register(websocketProxy);
  await app.register(dashboardMetricsRoute);
  await app.register(appsRoutes);
  await app.register(dashboardPage, { temporalUiUrl: deps.config.temporalUiUrl, temporalNamespace: deps.config.temporalNamespace });
  return app;
}
