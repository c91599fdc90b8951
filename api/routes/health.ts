import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';

const HealthBody = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  postgres: Type.String(),
  temporal: Type.String(),
  message: Type.Optional(Type.String()),
});

async function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms); })]);
  } finally {
    clearTimeout(timer);
  }
}

const healthRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['health'],
        summary: 'Liveness of the API and its reach to PostgreSQL and Temporal',
        response: { 200: HealthBody, 503: HealthBody },
      },
    },
    async (_request, reply) => {
      const [pg, temporal] = await Promise.allSettled([
        within(2_000, app.pg.query('SELECT 1')),
        within(2_000, app.temporal.workflowService.getSystemInfo({})),
      ]);
      const describe = (r: PromiseSettledResult<unknown>) => (r.status === 'fulfilled' ? 'ok' : `unreachable: ${(r.reason as Error).message}`);
      const body = { postgres: describe(pg), temporal: describe(temporal) };
      if (pg.status === 'fulfilled' && temporal.status === 'fulfilled') return { status: 'ok' as const, ...body };
      const failing = [pg.status === 'rejected' ? 'PostgreSQL' : null, temporal.status === 'rejected' ? 'Temporal' : null].filter(Boolean).join(' and ');
      return reply.code(503).send({ status: 'unavailable' as const, ...body, message: `cannot reach ${failing}` });
    },
  );
};

export default healthRoute;
