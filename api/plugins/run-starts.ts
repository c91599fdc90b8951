import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { RunStartOutbox } from '../run-start-outbox.js';

declare module 'fastify' {
  interface FastifyInstance {
    runStarts: RunStartOutbox;
  }
}

const runStartsPlugin: FastifyPluginAsync = async (app) => {
  const outbox = new RunStartOutbox(app.repos.runs, app.temporal, app.log);
  app.decorate('runStarts', outbox);
  app.addHook('onReady', async () => {
    // Runs a killed predecessor accepted but never started go first, then the loop keeps watch.
    void outbox.redrive().catch((err) => app.log.warn({ err }, 'run start re-drive failed'));
    outbox.startRedriveLoop();
  });
  app.addHook('onClose', async () => outbox.close());
};

export default fp(runStartsPlugin, { name: 'run-starts' });
