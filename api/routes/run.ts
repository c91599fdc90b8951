import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createHash } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { RunStatus } from '../../workflows/definitions.js';
import { AppUnreachableError, callApp } from '../../lib/app-client.js';
import { createAppLookup } from '../app-lookup.js';
import { acceptAsyncRun } from '../run-launcher.js';
import { webhookRequestOf } from '../webhook-request.js';
import type { SyncRunRecord } from '../../db/repositories/runs.js';
import { AsyncAccepted, RunParams, RunQuery } from '../schemas/run.js';
import { appPassthroughResponse, authErrors, errorResponse } from '../schemas/common.js';

class RunTimeoutError extends Error {}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();

function idempotencyKeyOf(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const key = Array.isArray(header) ? header[0] : header;
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw Object.assign(new Error('Idempotency-Key must be 1 to 255 visible ASCII characters'), { statusCode: 400 });
  }
  return key;
}

const runRoute: FastifyPluginAsyncTypebox = async (app) => {
  const findApp = createAppLookup(app.repos.apps);

  /** The answer the first sync run with this Idempotency-Key got, replayed; nothing runs again. */
  async function replaySyncRun(runId: string, key: string, reply: FastifyReply) {
    const prior = await app.repos.runs.get(runId);
    if (!prior?.finishedAt) {
      throw app.httpErrors.conflict(`the run with Idempotency-Key ${JSON.stringify(key)} (run ${runId}) is still in progress; retry shortly`);
    }
    const stored = prior.statusCode !== null ? await app.repos.runs.response(runId) : null;
    if (!stored) {
      const status = prior.status === 'timed_out' ? 504 : 502;
      return reply.code(status).send({ message: `run ${runId} ended ${prior.status}${prior.error ? `: ${prior.error}` : ''}` });
    }
    reply.code(prior.statusCode!);
    if (stored.contentType) reply.header('content-type', stored.contentType);
    return reply.send(stored.body);
  }

  // The body is forwarded byte for byte, so keep the raw bytes and only check that they are JSON.
  // Any content type is accepted: what matters is that the body parses.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: app.config.runBodyLimitBytes }, (_req, body, done) => {
    try {
      JSON.parse((body as Buffer).toString('utf8'));
      done(null, body);
    } catch (err) {
      done(app.httpErrors.badRequest(`request body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });

  app.post(
    '/v4/:project_id/:app_name/run',
    {
      schema: {
        tags: ['runs'],
        operationId: 'runApp',
        summary: 'Run an app synchronously, or asynchronously with ?async=true',
        description:
          'Forwards the JSON body to the app. Synchronous: answers with the app\'s status, content type and body, plus X-Run-Id. ' +
          'Asynchronous: answers 202 with the run_id once the run is durably accepted.',
        params: RunParams,
        querystring: RunQuery,
        response: {
          // Sync: whatever the app answered (any status); async: 202 with the run id.
          '2xx': appPassthroughResponse,
          202: AsyncAccepted,
          409: errorResponse('The Idempotency-Key was already used with a different body, or (sync with webhook) its run is still in progress.'),
          400: errorResponse('The body is not JSON or a parameter is invalid (webhookEndpoint: not an absolute http(s) URL, or not a public destination).'),
          ...authErrors,
          404: errorResponse('No app of that name in the project.'),
          413: errorResponse('The body exceeds the configured limit.'),
          502: errorResponse('The app could not be reached.'),
          503: errorResponse('The run could not be accepted (PostgreSQL unavailable), or X-Webhook-Secret was sent to a server without PAYLOAD_CODEC_KEY.'),
          504: errorResponse('The app did not answer within its response_grace_period.'),
        },
      },
    },
    async (request, reply) => {
      const { project_id: projectId, app_name: appName } = request.params;
      const target = await findApp(projectId, appName);
      if (!target) throw app.httpErrors.notFound(`app ${appName} not found in project ${projectId}`);
      const body = (request.body as Buffer | undefined) ?? Buffer.from('{}');
      const runId = uuidv7();
      const webhook = await webhookRequestOf(app.config, request, request.query.webhookEndpoint, runId);
      reply.header('x-run-id', runId);
      // Every later line about this request (errors, "request completed") carries the run id.
      request.log = reply.log = request.log.child({ run_id: runId });

      // Idempotency-Key applies to async runs and to sync runs with a webhook (a retried sync call
      // must not make the receiver see a second run); plain sync calls are simply repeated.
      const key = request.query.async || webhook ? idempotencyKeyOf(request.headers['idempotency-key']) : null;
      if (key) {
        const claim = await app.repos.runs.claimIdempotencyKey(target.appId, key, sha256(body), runId, app.config.idempotencyKeyTtlSeconds);
        if (claim.kind === 'conflict') {
          throw app.httpErrors.conflict(`Idempotency-Key ${JSON.stringify(key)} was already used with a different body (run ${claim.runId})`);
        }
        if (claim.kind === 'existing') {
          reply.header('x-run-id', claim.runId).header('idempotent-replayed', 'true');
          if (request.query.async) return reply.code(202).send({ run_id: claim.runId });
          return replaySyncRun(claim.runId, key, reply);
        }
      }

      if (request.query.async) {
        let spec;
        try {
          spec = await acceptAsyncRun({ config: app.config, runs: app.repos.runs }, target, runId, body, webhook);
        } catch (err) {
          if (key) await app.repos.runs.releaseIdempotencyKey(target.appId, key, runId).catch(() => {});
          throw err;
        }
        // Accepted: the row is committed. The workflow starts right after, never delaying the 202.
        app.runStarts.start(spec);
        app.metrics.runsStarted.inc({ mode: 'async' });
        return reply.code(202).send({ run_id: runId });
      }

      const createdAt = new Date();
      // With a webhook, the run goes to the webhook outbox only once the caller's response is out,
      // so neither PostgreSQL nor Temporal nor the receiver can delay or change that response.
      let forWebhook: { row: SyncRunRecord; response: { contentType: string | null; body: Buffer } | null } | null = null;
      let responded = false;
      const handOverWebhook = () => {
        if (!webhook || !forWebhook || !responded) return;
        app.webhooks.outbox.afterSyncRun(forWebhook.row, forWebhook.response, { runId, ...webhook });
        forWebhook = null;
      };
      if (webhook) {
        reply.raw.once('close', () => {
          responded = true;
          handOverWebhook();
        });
      }
      // `eventStatus` is what the dashboard counts: the app's status, the 504 the caller got, or none.
      const logRun = (status: RunStatus, statusCode: number | null, error: string | null, eventStatus = statusCode, response: { contentType: string | null; body: Buffer } | null = null) => {
        const finishedAt = new Date();
        const runTimeMs = finishedAt.getTime() - createdAt.getTime();
        const row: SyncRunRecord = { runId, appId: target.appId, projectId, appName, status, createdAt, finishedAt, runTimeMs, statusCode, error };
        if (webhook) {
          forWebhook = { row, response };
          handOverWebhook();
        } else app.runLog.add(row);
        app.events.recordRun(target, { ts: finishedAt, status: eventStatus, async: false, runTimeMs });
      };
      const graceMs = target.responseGracePeriod * 1000;
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new RunTimeoutError()), graceMs);
      // A caller that goes away should not keep the app busy.
      const onClose = () => {
        if (!reply.raw.writableFinished) abort.abort(new Error('client closed the connection'));
      };
      reply.raw.once('close', onClose);
      app.metrics.runsStarted.inc({ mode: 'sync' });
      try {
        const res = await callApp({ url: target.url, runId, body, dispatcher: app.appDispatcher, signal: abort.signal });
        logRun(res.statusCode >= 200 && res.statusCode < 300 ? 'succeeded' : 'failure', res.statusCode, null, res.statusCode, { contentType: res.contentType, body: res.body });
        reply.code(res.statusCode);
        if (res.contentType) reply.header('content-type', res.contentType);
        // The app's bytes go out untouched; no response schema applies to them.
        return (reply as FastifyReply).send(res.body);
      } catch (err) {
        if (abort.signal.reason instanceof RunTimeoutError) {
          logRun('timed_out', null, `no answer within ${target.responseGracePeriod} s`, 504);
          throw app.httpErrors.gatewayTimeout(`app ${appName} did not answer within its response_grace_period of ${target.responseGracePeriod} s`);
        }
        logRun(abort.signal.aborted ? 'cancelled' : 'failure', null, (err as Error).message);
        if (err instanceof AppUnreachableError) throw app.httpErrors.badGateway(`app ${appName}: ${err.message}`);
        throw err;
      } finally {
        clearTimeout(timer);
        reply.raw.off('close', onClose);
      }
    },
  );
};

export default runRoute;
