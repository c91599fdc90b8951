// `npm start`: the whole local stack in one command — Temporal dev server (with Web UI), database
// and migrations, the API, one worker and the echo example app deployed in project "demo".
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from '../config/config.js';
import { createPool } from '../db/pool.js';
import { ensureDatabase, migrate } from '../db/migrate.js';
import { appsRepository } from '../db/repositories/apps.js';
import { serviceAccountsRepository } from '../db/repositories/service-accounts.js';
import { parseAppManifest } from '../lib/app-manifest.js';
import { findOrBuildTemporalCli } from './temporal-cli.js';
import { startDevServer, type DevServer } from './temporal-dev-server.js';
import { buildWorkflowBundle } from './build-workflow-bundle.js';
import { buildDashboard } from './build-dashboard.js';
import { stopProcess } from './stop-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DATA = process.env.RUNHOOK_DATA_DIR ? path.resolve(process.env.RUNHOOK_DATA_DIR) : path.join(ROOT, '.data');
const ECHO_PORT = Number(process.env.ECHO_PORT ?? 9000);
const TEMPORAL_PORT = Number(process.env.TEMPORAL_PORT ?? 7233);
const TEMPORAL_UI_PORT = Number(process.env.TEMPORAL_UI_PORT ?? 8233);

const say = (line: string) => console.log(`[runhook] ${line}`);
const children: { name: string; proc: ChildProcess }[] = [];
let server: DevServer | undefined;
let stopping = false;

function startChild(name: string, entry: string, env: Record<string, string>): ChildProcess {
  // `node --import tsx` keeps each service one process, so a signal reaches it directly.
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = (d: Buffer) => {
    for (const line of d.toString().split('\n')) if (line.trim()) console.log(`[${name}] ${line}`);
  };
  proc.stdout!.on('data', prefix);
  proc.stderr!.on('data', prefix);
  proc.on('exit', (code, signal) => {
    if (!stopping) {
      say(`${name} exited (${signal ?? code}); stopping the stack`);
      void stop(1);
    }
  });
  children.push({ name, proc });
  return proc;
}

async function stop(code = 0): Promise<never> {
  if (stopping) return new Promise<never>(() => {});
  stopping = true;
  say('stopping…');
  // Workers get time to hand back in-flight work before they are killed.
  await Promise.all(children.map(({ proc }) => stopProcess(proc, 15_000)));
  await server?.stop();
  say('stopped');
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

async function localCodecKey(): Promise<string> {
  // Generated once per checkout; it encrypts webhook secrets in Temporal payloads.
  const file = path.join(DATA, 'payload-codec.key');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const key = randomBytes(32).toString('base64');
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  return key;
}

async function waitForHealth(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
      last = await res.text();
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`API not healthy within ${timeoutMs} ms: ${last}`);
}

async function main() {
  await mkdir(DATA, { recursive: true });
  const codecKey = process.env.PAYLOAD_CODEC_KEY || (await localCodecKey());
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: `127.0.0.1:${TEMPORAL_PORT}`,
    TEMPORAL_UI_URL: `http://127.0.0.1:${TEMPORAL_UI_PORT}`,
    PAYLOAD_CODEC_KEY: codecKey,
    // The demo app and demo webhook receivers live on this machine.
    WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: process.env.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS ?? 'true',
    // The local Web UI decrypts payloads through the API's codec endpoint (loopback only).
    PAYLOAD_CODEC_ENDPOINT: process.env.PAYLOAD_CODEC_ENDPOINT ?? 'true',
  };
  const config = loadConfigOrExit({ ...process.env, ...env });

  say(`database ${config.databaseUrl.replace(/\/\/[^@]*@/, '//')}`);
  try {
    if (await ensureDatabase(config.databaseUrl)) say('created the database');
  } catch (err) {
    throw new Error(`cannot reach PostgreSQL (${(err as Error).message}). Start it (bash scripts/ensure-postgres.sh) or set DATABASE_URL.`);
  }
  await migrate(config.databaseUrl, (l) => say(l));

  const binary = await findOrBuildTemporalCli(say);
  say(`starting the Temporal dev server (${path.relative(ROOT, binary) || binary}), state in ${path.relative(ROOT, path.join(DATA, 'temporal.sqlite'))}`);
  server = await startDevServer({
    binary,
    port: TEMPORAL_PORT,
    uiPort: TEMPORAL_UI_PORT,
    uiCodecEndpoint: config.payloadCodecEndpoint ? `http://127.0.0.1:${config.port}/codec` : undefined,
    dbFile: path.join(DATA, 'temporal.sqlite'),
    logFile: createWriteStream(path.join(DATA, 'temporal.log'), { flags: 'a' }),
  });
  server.process.on('exit', (code) => {
    if (!stopping) {
      say(`Temporal dev server exited (${code}); see .data/temporal.log`);
      void stop(1);
    }
  });

  // Bundled once here, so the worker starts without running webpack.
  env.WORKFLOW_BUNDLE_PATH = process.env.WORKFLOW_BUNDLE_PATH || (await buildWorkflowBundle(path.join(DATA, 'workflow-bundle.js')));
  // The dashboard page the API serves at /dashboard/.
  await buildDashboard();
  startChild('echo', 'examples/echo/main.ts', { ECHO_PORT: String(ECHO_PORT) });
  startChild('worker', 'worker/main.ts', env);
  startChild('api', 'api/server.ts', env);

  const pool = createPool(config.databaseUrl, 2);
  const manifest = parseAppManifest(await readFile(path.join(ROOT, 'examples', 'echo', 'app.toml'), 'utf8'));
  const app = await appsRepository(pool).upsert('demo', { ...manifest, url: `http://127.0.0.1:${ECHO_PORT}/run` });
  const { token } = await serviceAccountsRepository(pool).create('demo', `npm-start-${new Date().toISOString()}`, null);
  await pool.end();

  const api = `http://127.0.0.1:${config.port}`;
  await waitForHealth(`${api}/healthz`, 90_000);
  const runUrl = `${api}/v4/demo/${app.name}/run`;
  console.log(`
  runhook is up.
    API            ${api}   (run API /v4, management API /v2)
    API docs       ${api}/docs
    Dashboard      ${api}/dashboard/   (paste the token below, project "demo")
    Health         ${api}/healthz
    Temporal UI    ${server.uiUrl}/namespaces/${config.temporalNamespace}/workflows
    Example app    ${app.appId} -> ${app.url}

  A fresh token for project "demo" (shown once):
    export RUNHOOK_TOKEN=${token}

  Try it:
    curl -s -X POST '${runUrl}' -H "Authorization: Bearer $RUNHOOK_TOKEN" -H 'Content-Type: application/json' -d '{"hello":"world"}'
    curl -s -X POST '${runUrl}?async=true' -H "Authorization: Bearer $RUNHOOK_TOKEN" -H 'Content-Type: application/json' -d '{"sleep_ms":3000}'

  Ctrl-C stops everything.
`);
}

main().catch(async (err) => {
  console.error(`[runhook] ${err.message}`);
  await stop(1);
});
