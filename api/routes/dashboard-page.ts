import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';

export const DASHBOARD_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'web', 'dashboard', 'dist');

/**
 * The dashboard page: static files built by Vite (npm run build), served from this API so the page
 * and the endpoints it calls share an origin (no CORS, the token never leaves it). The page asks
 * for a token itself; the files carry no data.
 */
const dashboardPage: FastifyPluginAsync<{ distDir?: string; temporalUiUrl: string; temporalNamespace: string }> = async (app, opts) => {
  const dist = opts.distDir ?? DASHBOARD_DIST;
  const hide = { hide: true };

  // What the page needs to link runs to the Temporal Web UI; nothing secret.
  app.get('/dashboard/config.json', { schema: hide }, async () => ({ temporal_ui_url: opts.temporalUiUrl, temporal_namespace: opts.temporalNamespace }));

  if (!existsSync(path.join(dist, 'index.html'))) {
    app.get('/dashboard', { schema: hide }, async (_req, reply) => reply.code(404).send({ message: 'dashboard not built: run npm run build' }));
    app.get('/dashboard/*', { schema: hide }, async (_req, reply) => reply.code(404).send({ message: 'dashboard not built: run npm run build' }));
    return;
  }
  app.get('/dashboard', { schema: hide }, async (_req, reply) => reply.redirect('/dashboard/'));
  await app.register(fastifyStatic, {
    root: dist,
    prefix: '/dashboard/',
    // Hashed asset names: cache them for good; index.html always fresh.
    maxAge: '365d',
    immutable: true,
    setHeaders(res, filePath) {
      if (filePath.endsWith('.html')) res.setHeader('cache-control', 'no-cache');
      res.setHeader('referrer-policy', 'no-referrer');
      res.setHeader('x-content-type-options', 'nosniff');
    },
    schemaHide: true,
  });
};

export default dashboardPage;
