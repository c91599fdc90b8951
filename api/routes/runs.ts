import type { FastifyReply } from 'fastify';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { App } from '../../db/repositories/apps.js';
import type { RunRecord } from '../../db/repositories/runs.js';
import { decodeCursor, encodeCursor, toRunView } from '../run-view.js';
import { appPassthroughResponse, authErrors, errorResponse } from '../schemas/common.js';
import { AppRunsParams, ManagementRunsParams, RunList, RunListQuery, RunParams, RunView } from '../schemas/runs.js';

const CancelAccepted = Type.Object({
  run_id: Type.String(),
  status: Type.Literal('cancelling'),
});

const runsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  async function appByName(projectId: string, name: string): Promise<App> {
    const found = await app.repos.apps.findByName(projectId, name);
    if (!found) throw app.httpErrors.notFound(`app ${name} not found in project ${projectId}`);
    return found;
  }

  /** A run is only visible through its own app and project (tenant isolation). */
  async function runOf(projectId: string, appName: string, runId: string): Promise<RunRecord> {
    const target = await appByName(projectId, appName);
    const run = await app.repos.runs.get(runId);
    if (!run || run.appId !== target.appId || run.projectId !== projectId) {
      throw app.httpErrors.notFound(`run ${runId} not found for app ${appName}`);
    }
    return run;
  }

  async function view(run: RunRecord) {
    const hooks = await app.webhookSummaries([run.runId]);
    return toRunView(run, hooks.get(run.runId) ?? null);
  }

  async function listRuns(appId: string, q: Static<typeof RunListQuery>) {
    const before = q.cursor ? decodeCursor(q.cursor) : undefined;
    if (before === null) throw app.httpErrors.badRequest('cursor: not a cursor returned by this endpoint');
    const limit = q.limit ?? 20;
    const rows = await app.repos.runs.list({ appId, status: q.status, async: q.async, limit: limit + 1, before });
    const page = rows.slice(0, limit);
    const hooks = await app.webhookSummaries(page.map((r) => r.runId));
    return {
      runs: page.map((r) => toRunView(r, hooks.get(r.runId) ?? null)),
      next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null,
    };
  }

  const notFound = errorResponse('Unknown app, or no such run of this app.');

  app.get('/v4/:project_id/:app_name/runs/:run_id', {
    schema: {
      tags: ['runs'], operationId: 'getRun', summary: 'Status and timings of one run',
      params: RunParams,
      response: { 200: RunView, ...authErrors, 404: notFound },
    },
  }, async (request) => {
    const { project_id, app_name, run_id } = request.params;
    return view(await runOf(project_id, app_name, run_id));
  });

  app.get('/v4/:project_id/:app_name/runs/:run_id/result', {
    schema: {
      tags: ['runs'], operationId: 'getRunResult',
      summary: "The app's response to a run, as the app sent it (status, content type, body)",
      params: RunParams,
      response: {
        '2xx': appPassthroughResponse,
        ...authErrors,
        404: errorResponse('Unknown run, or the run ended without a response from the app.'),
        409: errorResponse('The run has not finished yet.'),
        410: errorResponse('The stored result is past its retention and was deleted.'),
      },
    },
  }, async (request, reply) => {
    const { project_id, app_name, run_id } = request.params;
    const run = await runOf(project_id, app_name, run_id);
    if (!run.finishedAt) throw app.httpErrors.conflict(`run ${run_id} is ${run.status}; its result is not available yet`);
    if (run.payloadsPrunedAt) {
      throw app.httpErrors.gone(`the result of run ${run_id} was deleted after the retention of ${app.config.resultRetentionSeconds} s`);
    }
    const stored = run.statusCode !== null ? await app.repos.runs.response(run_id) : null;
    if (!stored) throw app.httpErrors.notFound(`run ${run_id} ended ${run.status} without a stored response from the app`);
    reply.code(run.statusCode!).header('x-run-id', run_id);
    if (stored.contentType) reply.header('content-type', stored.contentType);
    return (reply as FastifyReply).send(stored.body);
  });

  app.get('/v4/:project_id/:app_name/runs', {
    schema: {
      tags: ['runs'], operationId: 'listRuns', summary: "An app's runs, newest first, cursor-paged",
      params: AppRunsParams, querystring: RunListQuery,
      response: { 200: RunList, 400: errorResponse('Invalid filter or cursor.'), ...authErrors, 404: errorResponse('Unknown app.') },
    },
  }, async (request) => {
    const target = await appByName(request.params.project_id, request.params.app_name);
    return listRuns(target.appId, request.query);
  });

  app.get('/v2/projects/:project_id/apps/:app_id/runs', {
    schema: {
      tags: ['runs'], operationId: 'listAppRuns', summary: "An app's runs, newest first, cursor-paged (management API)",
      params: ManagementRunsParams, querystring: RunListQuery,
      response: { 200: RunList, 400: errorResponse('Invalid filter or cursor.'), ...authErrors, 404: errorResponse('Unknown app.') },
    },
  }, async (request) => {
    const target = await app.repos.apps.findById(request.params.project_id, request.params.app_id);
    if (!target) throw app.httpErrors.notFound(`app ${request.params.app_id} not found in project ${request.params.project_id}`);
    return listRuns(target.appId, request.query);
  });

  app.post('/v4/:project_id/:app_name/runs/:run_id/cancel', {
    schema: {
      tags: ['runs'], operationId: 'cancelRun',
      summary: 'Cancel an async run: the workflow is cancelled and the in-flight call to the app is aborted',
      params: RunParams,
      response: {
        202: CancelAccepted, ...authErrors, 404: notFound,
        409: errorResponse('The run has already finished, or is synchronous.'),
      },
    },
  }, async (request, reply) => {
    const { project_id, app_name, run_id } = request.params;
    const run = await runOf(project_id, app_name, run_id);
    if (run.finishedAt) throw app.httpErrors.conflict(`run ${run_id} already finished as ${run.status}`);
    if (!run.async) throw app.httpErrors.conflict(`run ${run_id} is synchronous; only async runs can be cancelled`);
    try {
      await app.temporal.workflow.getHandle(run_id).cancel();
    } catch (err) {
      // Accepted but its workflow not started yet (the start outbox is behind): it never will run.
      if (err instanceof WorkflowNotFoundError && run.status === 'queued') {
        await app.repos.runs.finish({ runId: run_id, status: 'cancelled', statusCode: null, runTimeMs: null, error: 'run cancelled before it started' });
        return reply.code(202).send({ run_id, status: 'cancelling' as const });
      }
      // The workflow closed between our read and the cancel request.
      const fresh = await app.repos.runs.get(run_id);
      if (fresh?.finishedAt) throw app.httpErrors.conflict(`run ${run_id} already finished as ${fresh.status}`);
      throw err;
    }
    return reply.code(202).send({ run_id, status: 'cancelling' as const });
  });
};

export default runsRoutes;
