import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import type { Pool } from 'pg';
import { appsRepository, type AppsRepository } from '../../db/repositories/apps.js';
import { runsRepository, type RunsRepository } from '../../db/repositories/runs.js';
import { serviceAccountsRepository, type ServiceAccountsRepository } from '../../db/repositories/service-accounts.js';

declare module 'fastify' {
  interface FastifyInstance {
    pg: Pool;
    repos: { apps: AppsRepository; runs: RunsRepository; serviceAccounts: ServiceAccountsRepository };
  }
}

const repositoriesPlugin: FastifyPluginAsync<{ pool: Pool }> = async (app, opts) => {
  app.decorate('pg', opts.pool);
  app.decorate('repos', {
    apps: appsRepository(opts.pool),
    runs: runsRepository(opts.pool),
    serviceAccounts: serviceAccountsRepository(opts.pool),
  });
};

export default fp(repositoriesPlugin, { name: 'repositories' });
