import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { isWellFormedToken } from '../../lib/tokens.js';
import type { ServiceAccount } from '../../db/repositories/service-accounts.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: ServiceAccount | null;
  }
}

// Positive lookups are cached briefly so /run does not pay a database round trip per call;
// a revoked or expired token stops working within this window.
const CACHE_MS = 2_000;

const PROTECTED = /^\/v[24]\//;

const authPlugin: FastifyPluginAsync = async (app) => {
  const cache = new Map<string, { account: ServiceAccount; until: number }>();
  app.decorateRequest('principal', null);

  async function lookup(token: string): Promise<ServiceAccount | null> {
    const hit = cache.get(token);
    const now = Date.now();
    if (hit && hit.until > now) return hit.account;
    const account = await app.repos.serviceAccounts.findByToken(token);
    if (account) {
      if (cache.size > 10_000) cache.clear();
      cache.set(token, { account, until: now + CACHE_MS });
    } else cache.delete(token);
    return account;
  }

  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (!PROTECTED.test(request.url)) return;
    const header = request.headers.authorization;
    if (!header) throw app.httpErrors.unauthorized('missing Authorization header; send "Authorization: Bearer <token>"');
    const m = /^Bearer +(\S+)\s*$/i.exec(header);
    if (!m) throw app.httpErrors.unauthorized('malformed Authorization header; expected "Bearer <token>"');
    if (!isWellFormedToken(m[1])) throw app.httpErrors.unauthorized('malformed token');
    const account = await lookup(m[1]);
    if (!account) throw app.httpErrors.unauthorized('invalid token');
    if (account.revokedAt) throw app.httpErrors.unauthorized('token has been revoked');
    if (account.expiresAt && account.expiresAt.getTime() <= Date.now()) throw app.httpErrors.unauthorized('token has expired');
    request.principal = account;
  });

  // Runs after routing and params parsing: a valid token only reaches its own project.
  app.addHook('preHandler', async (request) => {
    const projectId = (request.params as { project_id?: string } | undefined)?.project_id;
    if (request.principal && projectId !== undefined && projectId !== request.principal.projectId) {
      throw app.httpErrors.forbidden(`token does not grant access to project ${projectId}`);
    }
  });
};

export default fp(authPlugin, { name: 'auth', dependencies: ['repositories', '@fastify/sensible'] });
