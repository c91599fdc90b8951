import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RunRecord } from '../../db/repositories/runs.js';
import { webhookWorkflowId } from '../../workflows/definitions.js';
import { authErrors, errorResponse } from '../schemas/common.js';
import { RunParams } from '../schemas/runs.js';
import { RedeliveryAccepted, WebhookLog, type WebhookLogT } from '../schemas/webhooks.js';

const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  /** A run is only visible through its own app and project (tenant isolation). */
  async function runOf(projectId: string, appName: string, runId: string): Promise<RunRecord> {
    const target = await app.repos.apps.findByName(projectId, appName);
    if (!target) throw app.httpErrors.notFound(`app ${appName} not found in project ${projectId}`);
    const run = await app.repos.runs.get(runId);
    if (!run || run.appId !== target.appId || run.projectId !== projectId) throw app.httpErrors.notFound(`run ${runId} not found for app ${appName}`);
    return run;
  }

  const notFound = errorResponse('Unknown app or run, or the run was requested without webhookEndpoint.');

  app.get('/v4/:project_id/:app_name/runs/:run_id/webhook', {
    schema: {
      tags: ['webhooks'], operationId: 'getRunWebhook',
      summary: "A run's webhook deliveries and every attempt (time, duration, status code or error)",
      params: RunParams,
      response: { 200: WebhookLog, ...authErrors, 404: notFound },
    },
  }, async (request): Promise<WebhookLogT> => {
    const { project_id, app_name, run_id } = request.params;
    await runOf(project_id, app_name, run_id);
    const deliveries = await app.webhooks.repo.deliveriesOf(run_id);
    if (!deliveries.length) throw app.httpErrors.notFound(`run ${run_id} has no webhook`);
    return {
      run_id,
      endpoint: deliveries[0].endpoint,
      signed: deliveries[0].secretSealed !== null,
      state: deliveries[deliveries.length - 1].state,
      deliveries: deliveries.map((d) => ({
        delivery: d.delivery,
        workflow_id: webhookWorkflowId(run_id, d.delivery),
        state: d.state,
        created_at: d.createdAt.toISOString(),
        finished_at: d.finishedAt?.toISOString() ?? null,
        error: d.error,
        attempts: d.attempts.map((a) => ({
          attempt: a.attempt,
          started_at: a.startedAt.toISOString(),
          duration_ms: a.durationMs,
          status_code: a.statusCode,
          error: a.error,
          outcome: a.outcome,
        })),
      })),
    };
  });

  app.post('/v4/:project_id/:app_name/runs/:run_id/webhook/redeliver', {
    schema: {
      tags: ['webhooks'], operationId: 'redeliverRunWebhook',
      summary: 'Deliver the same webhook body again (same X-Request-Id), with its own 3 attempts',
      params: RunParams,
      response: {
        202: RedeliveryAccepted, ...authErrors, 404: notFound,
        409: errorResponse('The run has not finished, or a delivery of it is still pending.'),
        410: errorResponse("The run's stored response is past its retention and was deleted."),
      },
    },
  }, async (request, reply) => {
    const { project_id, app_name, run_id } = request.params;
    const run = await runOf(project_id, app_name, run_id);
    const first = await app.webhooks.repo.get(run_id, 0);
    if (!first) throw app.httpErrors.notFound(`run ${run_id} has no webhook`);
    if (!run.finishedAt) throw app.httpErrors.conflict(`run ${run_id} is ${run.status}; it is delivered when it finishes`);
    if (run.payloadsPrunedAt) throw app.httpErrors.gone(`the response of run ${run_id} was deleted after the retention of ${app.config.resultRetentionSeconds} s`);
    const delivery = await app.webhooks.repo.createRedelivery(run_id);
    if (delivery === null) throw app.httpErrors.conflict(`a webhook delivery of run ${run_id} is still pending`);
    // The row is the outbox entry: if this start fails, the re-drive loop starts it later.
    await app.webhooks.outbox.start(run_id, delivery);
    return reply.code(202).send({ run_id, delivery, workflow_id: webhookWorkflowId(run_id, delivery), state: 'pending' as const });
  });
};

export default webhookRoutes;
