import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { queryDashboardBuckets } from '../../db/metrics/dashboard-query.js';
import { toDashboardMetrics } from '../../db/metrics/dashboard-response.js';
import { parsePeriod, PeriodError } from '../../db/metrics/period.js';
import { authErrors, errorResponse } from '../schemas/common.js';
import { DashboardMetrics, DashboardMetricsParams, DashboardMetricsQuery } from '../schemas/dashboard-metrics.js';

// PostgreSQL's "time zone not recognized": a zone luxon (ICU) knows but the server's tzdata does not.
const INVALID_PARAMETER_VALUE = '22023';

const dashboardMetricsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/v2/projects/:project_id/apps/:app_id/dashboard-metrics', {
    schema: {
      tags: ['metrics'],
      operationId: 'getAppDashboardMetrics',
      summary: "An app's request counts and cost over time",
      description: 'Request counts split by status and spend split by resource, bucketed by minute, hour, day or month in a time zone, zero-filled. The period is [start, end): `end` is exclusive; every bucket that overlaps it is reported whole.',
      params: DashboardMetricsParams,
      querystring: DashboardMetricsQuery,
      response: {
        200: DashboardMetrics,
        400: errorResponse('Malformed request or invalid parameters; the message names the parameter and the rule.'),
        ...authErrors,
        404: errorResponse('No such app in this project.'),
      },
    },
  }, async (request, reply) => {
    const { project_id, app_id } = request.params;
    let period;
    try {
      period = parsePeriod(request.query as Record<string, unknown>);
    } catch (err) {
      if (err instanceof PeriodError) return reply.code(400).send({ message: err.message });
      throw err;
    }
    // PostgreSQL text cannot hold NUL; no app id contains one.
    const known = !app_id.includes('\u0000') && !project_id.includes('\u0000') &&
      (await app.pg.query('SELECT 1 FROM apps WHERE project_id = $1 AND app_id = $2', [project_id, app_id])).rowCount;
    if (!known) return reply.code(404).send({ message: `app ${app_id} not found in project ${project_id}` });
    let rows;
    try {
      rows = await queryDashboardBuckets(app.pg, { appId: app_id, start: period.start, end: period.end, interval: period.interval, tz: period.tz });
    } catch (err) {
      if ((err as { code?: string }).code === INVALID_PARAMETER_VALUE) {
        return reply.code(400).send({ message: `tz: time zone ${JSON.stringify(period.tz)} is not known to the database` });
      }
      throw err;
    }
    return toDashboardMetrics(rows, period);
  });
};

export default dashboardMetricsRoute;
