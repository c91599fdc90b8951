import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import type { Pool } from 'pg';
import { webhooksRepository, type WebhooksRepository } from '../../db/repositories/webhooks.js';
import { WebhookOutbox } from '../webhook-outbox.js';

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: { repo: WebhooksRepository; outbox: WebhookOutbox };
  }
}

const webhooksPlugin: FastifyPluginAsync<{ pool: Pool }> = async (app, opts) => {
  const repo = webhooksRepository(opts.pool);
  const outbox = new WebhookOutbox(repo, app.temporal, app.config, app.log);
  app.decorate('webhooks', { repo, outbox });
  app.addHook('onReady', async () => outbox.startRedriveLoop());
  // After the server stopped accepting: deliveries of the last sync runs still get recorded and started.
  app.addHook('onClose', async () => outbox.close());
};

export default fp(webhooksPlugin, { name: 'webhooks' });
