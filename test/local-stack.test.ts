import { spawn, execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, inject, it } from 'vitest';
import { freePort } from '../scripts/temporal-dev-server.js';
import { PG_ADMIN_URL } from './helpers/test-database.js';
import { waitFor } from './helpers/stack.js';
import pg from 'pg';

const ROOT = path.resolve(__dirname, '..');
const dbName = `runhook_t_start_${process.pid}`;

afterAll(async () => {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
});

it('npm start brings up the whole stack, serves the printed curl commands, and Ctrl-C stops every process', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'runhook-start-'));
  const [apiPort, temporalPort, uiPort, echoPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const dbUrl = new URL(PG_ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start-local-stack.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(apiPort),
      TEMPORAL_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(uiPort),
      ECHO_PORT: String(echoPort),
      RUNHOOK_DATA_DIR: dataDir,
      DATABASE_URL: dbUrl.toString(),
      TEMPORAL_CLI_PATH: inject('temporalCliPath'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  try {
    await waitFor(async () => out.includes('Ctrl-C stops everything') || child.exitCode !== null, 120_000, 200);
    expect(out).toContain('runhook is up');
    const token = /RUNHOOK_TOKEN=(rh_[A-Za-z0-9_-]{43})/.exec(out)![1];
    expect(out).toContain(`http://127.0.0.1:${uiPort}/namespaces/default/workflows`);

    // The printed curl commands, run as printed.
    const curls = out.split('\n').filter((l) => l.trim().startsWith('curl '));
    expect(curls).toHaveLength(2);
    const sync = execFileSync('sh', ['-c', curls[0]], { env: { ...process.env, RUNHOOK_TOKEN: token }, encoding: 'utf8' });
    expect(JSON.parse(sync).echo).toEqual({ hello: 'world' });
    const accepted = JSON.parse(execFileSync('sh', ['-c', curls[1]], { env: { ...process.env, RUNHOOK_TOKEN: token }, encoding: 'utf8' }));
    expect(Object.keys(accepted)).toEqual(['run_id']);
    const run = await waitFor(async () => {
      const r = await (await fetch(`http://127.0.0.1:${apiPort}/v4/demo/echo/runs/${accepted.run_id}`, { headers: { authorization: `Bearer ${token}` } })).json();
      return r.finished_at ? r : null;
    }, 30_000, 250);
    expect(run.status).toBe('succeeded');
    // The Web UI is served by the dev server.
    expect((await fetch(`http://127.0.0.1:${uiPort}/`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${apiPort}/healthz`)).status).toBe(200);
  } finally {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    await rm(dataDir, { recursive: true, force: true });
  }
  // Every port the stack opened is closed again: nothing left running.
  for (const port of [apiPort, echoPort, uiPort]) {
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  }
}, 180_000);
