import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';

export interface HttpCell {
  rps: number;
  p50ms: number;
  p99ms: number;
  requests: number;
  /** Non-2xx answers plus socket errors (connect, read, write, timeout); a valid cell has none. */
  errors: number;
}

/** A wrk Lua script that POSTs `body` with the given headers. */
export async function writePostScript(file: string, body: string, headers: Record<string, string>): Promise<string> {
  const lua = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const lines = ['wrk.method = "POST"', `wrk.body = ${lua(body)}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`wrk.headers[${lua(k)}] = ${lua(v)}`);
  await writeFile(file, lines.join('\n') + '\n');
  return file;
}

function toMs(value: string, unit: string): number {
  const v = Number(value);
  return unit === 'us' ? v / 1000 : unit === 's' ? v * 1000 : unit === 'm' ? v * 60_000 : v;
}

export function parseWrkOutput(out: string): HttpCell {
  const pct = (p: string) => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)\\b`, 'm').exec(out);
    return m ? toMs(m[1], m[2]) : NaN;
  };
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    p50ms: pct('50'),
    p99ms: pct('99'),
    requests,
    errors: non2xx + socketErrors,
  };
}

/** One wrk run, bounded: killed if it outlives its duration by 20 s. */
export function runWrk(opts: { wrk: string; url: string; connections: number; seconds: number; script: string; threads?: number }): Promise<HttpCell> {
  const threads = Math.min(opts.threads ?? 1, opts.connections);
  const args = ['-t', String(threads), '-c', String(opts.connections), '-d', `${opts.seconds}s`, '--timeout', '5s', '--latency', '-s', opts.script, opts.url];
  return new Promise((resolve, reject) => {
    const child = spawn(opts.wrk, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    const killer = setTimeout(() => child.kill('SIGKILL'), (opts.seconds + 20) * 1000);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(killer);
      if (code !== 0) return reject(new Error(`wrk ${args.join(' ')} failed (${signal ?? code}): ${out.trim()}`));
      resolve(parseWrkOutput(out));
    });
  });
}
