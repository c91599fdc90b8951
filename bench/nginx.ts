import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { freePort } from '../scripts/temporal-dev-server.js';
import { stopProcess } from '../scripts/stop-process.js';
import { childPids } from './process-cpu.js';

/** The static JSON the app answers; small, so the numbers measure per-request overhead. */
export const STATIC_ANSWER = '{"ok":true,"answer":42}';

export interface NginxPair {
  /** The app: nginx answering STATIC_ANSWER from a `return 200`. */
  appUrl: string;
  /** The peer to beat: a second nginx proxying to the app with upstream keepalive. */
  proxyUrl: string;
  /** Every process of each nginx (master and workers), for CPU accounting. */
  appPids(): number[];
  proxyPids(): number[];
  stop(): Promise<void>;
}

// Generous keepalive limits on both sides so nginx is measured at its best, as undici's pool is
// (no reconnect every 1000 requests).
function appConf(dir: string, port: number): string {
  return `worker_processes 1;
pid ${dir}/app.pid;
error_log ${dir}/app-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/app-body;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:${port} reuseport backlog=4096;
    location / {
      default_type application/json;
      return 200 '${STATIC_ANSWER}';
    }
  }
}
`;
}

function proxyConf(dir: string, port: number, appPort: number): string {
  return `worker_processes 1;
pid ${dir}/proxy.pid;
error_log ${dir}/proxy-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/proxy-body;
  proxy_temp_path ${dir}/proxy-temp;
  keepalive_requests 1000000;
  upstream app {
    server 127.0.0.1:${appPort};
    keepalive 64;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port} reuseport backlog=4096;
    location / {
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
}

async function waitForPort(port: number, child: ChildProcess, logFile: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      const log = await readFile(logFile, 'utf8').catch(() => '');
      throw new Error(`nginx exited with code ${child.exitCode}: ${log.trim().split('\n').slice(-3).join(' | ')}`);
    }
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nginx did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
}

function startNginx(binary: string, dir: string, name: string): ChildProcess {
  // -p keeps every relative path in our temp dir; -e overrides the compiled-in error log
  // (/var/log/nginx/error.log), which nginx opens before reading the config.
  return spawn(binary, ['-p', dir, '-e', path.join(dir, `${name}-error.log`), '-c', path.join(dir, `${name}.conf`), '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/** Starts the app and the proxy as two single-worker nginx instances on free loopback ports. */
export async function startNginxPair(binary: string, dir: string): Promise<NginxPair> {
  await mkdir(dir, { recursive: true });
  const [appPort, proxyPort] = [await freePort(), await freePort()];
  await writeFile(path.join(dir, 'app.conf'), appConf(dir, appPort));
  await writeFile(path.join(dir, 'proxy.conf'), proxyConf(dir, proxyPort, appPort));
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map((c) => stopProcess(c, 5_000)));
  };
  try {
    children.push(startNginx(binary, dir, 'app'));
    await waitForPort(appPort, children[0], path.join(dir, 'app-error.log'));
    children.push(startNginx(binary, dir, 'proxy'));
    await waitForPort(proxyPort, children[1], path.join(dir, 'proxy-error.log'));
  } catch (err) {
    await stop();
    throw err;
  }
  const pidsOf = (c: ChildProcess) => (c.pid ? [c.pid, ...childPids(c.pid)] : []);
  return {
    appUrl: `http://127.0.0.1:${appPort}/run`,
    proxyUrl: `http://127.0.0.1:${proxyPort}/run`,
    appPids: () => pidsOf(children[0]),
    proxyPids: () => pidsOf(children[1]),
    stop,
  };
}
