// A webhook receiver with Fastify: keeps the raw body bytes, verifies the signature, and
// deduplicates on X-Request-Id (a delivery may arrive more than once).
import Fastify, { type FastifyInstance } from 'fastify';
import { verifyWebhook } from '../../lib/verify-webhook.js';

export interface RunWebhook {
  run_id: string;
  status: string;
  status_code: number | null;
  response: unknown;
  [field: string]: unknown;
}

export function buildFastifyReceiver(opts: { secret: string; onRun: (run: RunWebhook) => void | Promise<void> }): FastifyInstance {
  const app = Fastify();
  const seen = new Set<string>(); // use a table with a unique key in production
  // Parse nothing: the signature covers the exact bytes, and re-serialised JSON would differ.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.post('/webhooks/runhook', async (request, reply) => {
    const body = request.body as Buffer;
    const check = verifyWebhook({ secret: opts.secret, headers: request.headers, body, toleranceSeconds: 300 });
    if (!check.ok) return reply.code(401).send({ error: check.reason });
    // Answer 2xx for a duplicate too, or it would be retried.
    if (seen.has(check.requestId)) return reply.code(200).send({ duplicate: true });
    seen.add(check.requestId);
    await opts.onRun(JSON.parse(body.toString('utf8')) as RunWebhook);
    return reply.code(204).send();
  });
  return app;
}

// Run it: WEBHOOK_SECRET=… npx tsx examples/webhook-receivers/fastify-receiver.ts
if (import.meta.url === `file://${process.argv[1]}`) {
  const app = buildFastifyReceiver({ secret: process.env.WEBHOOK_SECRET ?? '', onRun: (run) => console.log('run', run.run_id, run.status) });
  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 9100) });
  console.log(`listening on http://127.0.0.1:${process.env.PORT ?? 9100}/webhooks/runhook`);
}
