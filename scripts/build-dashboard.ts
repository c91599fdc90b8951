import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WEB = path.join(ROOT, 'web', 'dashboard');

/** Builds the dashboard page (web/dashboard) into web/dashboard/dist, which the API serves at /dashboard/. */
export async function buildDashboard(outDir = path.join(WEB, 'dist')): Promise<string> {
  await build({ configFile: path.join(WEB, 'vite.config.ts'), root: WEB, build: { outDir, emptyOutDir: true }, logLevel: 'warn' });
  return outDir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildDashboard();
  console.log(`dashboard built into ${path.relative(process.cwd(), out)}`);
}
