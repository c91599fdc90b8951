// A webhook receiver with Express: express.raw keeps the body as bytes for the signature check,
// and X-Request-Id deduplicates (a delivery may arrive more than once).
import express, { type Express } from 'express';
import { verifyWebhook } from '../../lib/verify-webhook.js';
import type { RunWebhook } from './fastify-receiver.js';

export function buildExpressReceiver(opts: { secret: string; onRun: (run: RunWebhook) => void | Promise<void> }): Express {
  const app = express();
  const seen = new Set<string>(); // use a table with a unique key in production

  app.post('/webhooks/runhook', express.raw({ type: 'application/json', limit: '20mb' }), async (req, res) => {
    const body = req.body as Buffer;
    const check = verifyWebhook({ secret: opts.secret, headers: req.headers, body, toleranceSeconds: 300 });
    if (!check.ok) {
      res.status(401).json({ error: check.reason });
      return;
    }
    if (seen.has(check.requestId)) {
      res.status(200).json({ duplicate: true });
      return;
    }
    seen.add(check.requestId);
    await opts.onRun(JSON.parse(body.toString('utf8')) as RunWebhook);
    res.status(204).end();
  });
  return app;
}

// Run it: WEBHOOK_SECRET=… npx tsx examples/webhook-receivers/express-receiver.ts
if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.env.PORT ?? 9101);
  buildExpressReceiver({ secret: process.env.WEBHOOK_SECRET ?? '', onRun: (run) => console.log('run', run.run_id, run.status) })
    .listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/webhooks/runhook`));
}
