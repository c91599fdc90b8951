import type { App, AppsRepository } from '../db/repositories/apps.js';

// /run resolves an app on every call; a short cache keeps that off the database. A redeploy
// (new url or grace period) is seen within this window.
const CACHE_MS = 2_000;

export function createAppLookup(apps: AppsRepository) {
  const cache = new Map<string, { app: App; until: number }>();
  return async function findApp(projectId: string, name: string): Promise<App | null> {
    const key = `${projectId}\u0000${name}`;
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && hit.until > now) return hit.app;
    const app = await apps.findByName(projectId, name);
    if (app) {
      if (cache.size > 10_000) cache.clear();
      cache.set(key, { app, until: now + CACHE_MS });
    } else cache.delete(key);
    return app;
  };
}
