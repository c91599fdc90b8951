import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { v7 as uuidv7 } from 'uuid';
import { AppUnreachableError, callApp } from '../../lib/app-client.js';
import { createAppLookup } from '../app-lookup.js';
import { launchAsyncRun, RunNotAcceptedError } from '../run-launcher.js';
import { AsyncAccepted, RunParams, RunQuery } from '../schemas/run.js';
import { authErrors, errorResponse } from '../schemas/common.js';

class RunTimeoutError extends Error {}

const runRoute: FastifyPluginAsyncTypebox = async (app) => {
  const findApp = createAppLookup(app.repos.apps);

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
          202: AsyncAccepted,
          400: errorResponse('The body is not JSON or a parameter is invalid.'),
          ...authErrors,
          404: errorResponse('No app of that name in the project.'),
          413: errorResponse('The body exceeds the configured limit.'),
          502: errorResponse('The app could not be reached.'),
          503: errorResponse('The run could not be accepted (Temporal unavailable).'),
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
      reply.header('x-run-id', runId);

      if (request.query.async) {
        try {
          await launchAsyncRun({ config: app.config, temporal: app.temporal, runs: app.repos.runs }, target, runId, body, null);
        } catch (err) {
          if (err instanceof RunNotAcceptedError) throw app.httpErrors.serviceUnavailable(err.message);
          throw err;
        }
        return reply.code(202).send({ run_id: runId });
      }

      const graceMs = target.responseGracePeriod * 1000;
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new RunTimeoutError()), graceMs);
      // A caller that goes away should not keep the app busy.
      const onClose = () => {
        if (!reply.raw.writableFinished) abort.abort(new Error('client closed the connection'));
      };
      reply.raw.once('close', onClose);
      try {
        const res = await callApp({ url: target.url, runId, body, dispatcher: app.appDispatcher, signal: abort.signal });
        reply.code(res.statusCode);
        if (res.contentType) reply.header('content-type', res.contentType);
        // The app's bytes go out untouched; no response schema applies to them.
        return (reply as FastifyReply).send(res.body);
      } catch (err) {
        if (abort.signal.reason instanceof RunTimeoutError) {
          throw app.httpErrors.gatewayTimeout(`app ${appName} did not answer within its response_grace_period of ${target.responseGracePeriod} s`);
        }
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
