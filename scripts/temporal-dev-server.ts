import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../workflows/definitions.js';
import { ensureSearchAttributes } from '../lib/search-attributes.js';
import { stopProcess } from './stop-process.js';

export interface DevServer {
  address: string;
  uiUrl: string | null;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function saFlags(): string[] {
  return Object.values(SEARCH_ATTRIBUTES).flatMap((k) => ['--search-attribute', `${k.name}=${k.type === 'BOOL' ? 'Bool' : 'Keyword'}`]);
}

async function waitForFrontend(address: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`temporal dev server exited with code ${child.exitCode}`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1_000 });
      await conn.workflowService.getSystemInfo({});
      await conn.close();
      return;
    } catch (err) {
      lastErr = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`temporal dev server at ${address} did not start within ${timeoutMs} ms: ${(lastErr as Error)?.message}`);
}

/** Starts `temporal server start-dev` and waits until it answers, with our search attributes registered. */
export async function startDevServer(opts: {
  binary: string;
  port?: number;
  uiPort?: number | null;
  /** Remote payload codec the Web UI calls to show encrypted payloads (the API's /codec). */
  uiCodecEndpoint?: string;
  dbFile?: string;
  logFile?: NodeJS.WritableStream;
  startTimeoutMs?: number;
}): Promise<DevServer> {
  const port = opts.port ?? (await freePort());
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn', ...saFlags(),
    '--dynamic-config-value', 'frontend.enableServerVersionCheck=false',
    '--sqlite-pragma', 'journal_mode=WAL', '--sqlite-pragma', 'synchronous=NORMAL'];
  if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  if (opts.uiPort && opts.uiCodecEndpoint) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  else args.push('--headless');
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  const child = spawn(opts.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  if (opts.logFile) {
    child.stdout?.pipe(opts.logFile, { end: false });
    child.stderr?.pipe(opts.logFile, { end: false });
  } else {
    child.stdout?.resume();
    child.stderr?.resume();
  }
  const address = `127.0.0.1:${port}`;
  try {
    await waitForFrontend(address, child, opts.startTimeoutMs ?? 60_000);
    // An existing --db-filename keeps its namespace, so flags alone do not add attributes to it.
    await ensureSearchAttributes(address, 'default');
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    address,
    uiUrl: opts.uiPort ? `http://127.0.0.1:${opts.uiPort}` : null,
    process: child,
    stop: () => stopProcess(child),
  };
}
