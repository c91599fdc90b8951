import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../scripts/temporal-dev-server.js';
import { stopProcess } from '../scripts/stop-process.js';
import { spawnTs, tail, waitUntil, type BenchStack } from './bench-stack.js';
import type { NginxPair } from './nginx.js';
import { runWrk, writePostScript, type HttpCell } from './wrk.js';
import { cpuMsOf, pidsNamed } from './process-cpu.js';
import { compareRecording, type RecordingComparison } from './recording-ab.js';

export const SYNC_TARGETS = ['direct', 'nginx proxy', 'node proxy (floor)', '/run', '/run (recording off)'] as const;
export type SyncTarget = (typeof SYNC_TARGETS)[number];

export interface SyncOverheadOptions {
  stack: BenchStack;
  nginx: NginxPair;
  wrk: string;
  dir: string;
  seconds: number;
  warmupSeconds: number;
  /** API names in the stack: recording on (required) and off (optional row). */
  apiName: string;
  apiNoRecordingName?: string;
  /** A second recording-off API for the A/A control of the interleaved rounds. */
  apiControlName?: string;
  log: (line: string) => void;
}

export interface SyncCell extends HttpCell {
  /**
   * CPU time the server under test spent per answered request, in µs: the nginx app for direct,
   * the proxying nginx for nginx proxy, the API process for /run (the app's share excluded). Unlike
   * req/s it hardly moves when other work shares the machine.
   */
  serverCpuUsPerRequest: number;
  /** CPU of every PostgreSQL process per request at the same time (run log and event writes). */
  postgresCpuUsPerRequest: number;
}

export interface SyncOverheadResult {
  scenario: 'sync';
  secondsPerCell: number;
  requestBody: string;
  cells: Record<string, { c1: SyncCell; c32: SyncCell }>;
  requestEventsRecorded: number;
  ratios: {
    runVsNginxProxyThroughputC32: number;
    runAddedP50OverDirectC1Ms: number;
    nginxProxyVsDirectThroughputC32: number;
    recordingOnVsOffThroughputC32: number | null;
    /** Recording on vs off as interleaved rounds with an A/A control (bench/recording-ab.ts). */
    recordingInterleavedC32: RecordingComparison | null;
    /** One caller at a time (the machine not saturated): p50 with recording on minus off, in ms. */
    recordingAddedP50C1Ms: number | null;
    /** /run over the bare Node proxy: what auth, routing, the run log and recording cost. */
    runVsNodeProxyThroughputC32: number;
  };
  targets: { runVsNginxProxyThroughputC32: string; runAddedP50OverDirectC1Ms: string };
  met: { throughput: boolean; latency: boolean };
}

/** bench/node-proxy-server.ts as its own process, forwarding to the nginx app. */
async function startNodeProxy(appUrl: string): Promise<{ url: string; pid: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawnTs('bench/node-proxy-server.ts', { NODE_PROXY_TARGET: appUrl, PORT: String(port) });
  const output = tail(child);
  try {
    await waitUntil('node proxy', child, output, async () => output().includes('listening'), 30_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return { url: `http://127.0.0.1:${port}/`, pid: child.pid!, child };
}

const PROJECT = 'bench';
// Three of each rotation of (on, off, second off). 3-s cells swung more (rounds 0.65-1.8x A/A).
const INTERLEAVED_ROUNDS = 9;
const INTERLEAVED_SECONDS = 5;
const APP = 'static';
const BODY = '{"input":"bench","n":1}';

/**
 * Requests/s and p50/p99 at concurrency 1 and 32 for one static JSON app called directly, through
 * nginx proxy_pass with keepalive, and through /run (auth, run log and event recording on), and,
 * when that API runs, through /run with event recording off. Every target gets the same request.
 */
export async function runSyncOverheadBench(o: SyncOverheadOptions): Promise<SyncOverheadResult> {
  const { stack, log } = o;
  await stack.deploy(PROJECT, APP, o.nginx.appUrl);
  const token = await stack.token(PROJECT);
  const script = await writePostScript(path.join(o.dir, 'post.lua'), BODY, {
    'Content-Type': 'application/json',
    Authorization: `Bearer ${token}`,
  });
  const runPath = `/v4/${PROJECT}/${APP}/run`;
  const nodeProxy = await startNodeProxy(o.nginx.appUrl);
  try {
    const urls: Partial<Record<SyncTarget, string>> = {
      direct: o.nginx.appUrl,
      'nginx proxy': o.nginx.proxyUrl,
      'node proxy (floor)': nodeProxy.url,
      '/run': stack.apis[o.apiName] + runPath,
    };
    if (o.apiNoRecordingName) urls['/run (recording off)'] = stack.apis[o.apiNoRecordingName] + runPath;

    // A wrong token or URL would make every target "fast"; check each answers the static JSON first.
    for (const [name, url] of Object.entries(urls)) {
      const res = await fetch(url, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } });
      const text = await res.text();
      if (res.status !== 200 || !text.includes('"answer":42')) throw new Error(`${name} (${url}) answered ${res.status} ${text.slice(0, 200)}`);
    }

    const serverPids: Record<string, () => number[]> = {
      direct: o.nginx.appPids,
      'nginx proxy': o.nginx.proxyPids,
      'node proxy (floor)': () => [nodeProxy.pid],
      '/run': () => [stack.apiPids[o.apiName]],
      '/run (recording off)': () => (o.apiNoRecordingName ? [stack.apiPids[o.apiNoRecordingName]] : []),
      control: () => (o.apiControlName ? [stack.apiPids[o.apiControlName]] : []),
    };
    const measure = async (name: string, url: string, connections: number, seconds = o.seconds): Promise<SyncCell> => {
      const pids = serverPids[name]();
      const pg = pidsNamed('postgres');
      const cpu0 = cpuMsOf(pids);
      const pg0 = cpuMsOf(pg);
      const cell = await runWrk({ wrk: o.wrk, url, connections, seconds, script });
      // Events land up to a flush interval after the answers.
      const cpuMs = cpuMsOf(pids) - cpu0;
      await new Promise((r) => setTimeout(r, 500));
      const pgMs = cpuMsOf(pg) - pg0;
      const perRequest = (ms: number) => Math.round((ms * 1000 * 10) / Math.max(1, cell.requests)) / 10;
      return { ...cell, serverCpuUsPerRequest: perRequest(cpuMs), postgresCpuUsPerRequest: perRequest(pgMs) };
    };

    const cells: SyncOverheadResult['cells'] = {};
    for (const [name, url] of Object.entries(urls)) {
      log(`sync: ${name}: warm-up ${o.warmupSeconds}s, then ${o.seconds}s at c=1 and ${o.seconds}s at c=32`);
      await runWrk({ wrk: o.wrk, url, connections: 32, seconds: o.warmupSeconds, script });
      const c1 = await measure(name, url, 1);
      const c32 = await measure(name, url, 32);
      for (const [c, cell] of [['c=1', c1], ['c=32', c32]] as const) {
        if (cell.errors) log(`sync: ${name} ${c}: ${cell.errors} errors (non-2xx or socket) out of ${cell.requests}`);
      }
      cells[name] = { c1, c32 };
    }

    let interleaved: RecordingComparison | null = null;
    const controlUrl = o.apiControlName ? stack.apis[o.apiControlName] + runPath : undefined;
    if (urls['/run (recording off)'] && controlUrl) {
      const targets = { on: ['/run', urls['/run']!], off: ['/run (recording off)', urls['/run (recording off)']], control: ['control', controlUrl] } as const;
      log(`sync: recording on vs off, ${INTERLEAVED_ROUNDS} rounds of (on, off, second off) in rotated order, ${INTERLEAVED_SECONDS}s each at c=32`);
      // One unmeasured round first (the control's warm-up too): without it, the first measured cell
      // (the recording-on API) read 13-29 % low in three runs out of three, while that API read like
      // the others in later rounds.
      for (const [name, url] of Object.values(targets)) {
        const warm = await runWrk({ wrk: o.wrk, url, connections: 32, seconds: o.warmupSeconds, script });
        if (warm.errors) throw new Error(`${name} answered ${warm.errors} of ${warm.requests} warm-up requests with an error`);
      }
      interleaved = await compareRecording(INTERLEAVED_ROUNDS, INTERLEAVED_SECONDS, async (t, seconds) => {
        const cell = await measure(targets[t][0], targets[t][1], 32, seconds);
        return { rps: cell.rps, cpuUsPerRequest: Math.round((cell.serverCpuUsPerRequest + cell.postgresCpuUsPerRequest) * 10) / 10 };
      });
    }

    // Events are written in batches a little after the answers; give the last batch time to land.
    await new Promise((r) => setTimeout(r, 1_000));
    const { rows } = await stack.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM request_events WHERE app_id = $1', [`${PROJECT}-${APP}`]);

    const run = cells['/run'];
    const off = cells['/run (recording off)'];
    const ratios = {
      runVsNginxProxyThroughputC32: run.c32.rps / cells['nginx proxy'].c32.rps,
      runAddedP50OverDirectC1Ms: run.c1.p50ms - cells.direct.c1.p50ms,
      nginxProxyVsDirectThroughputC32: cells['nginx proxy'].c32.rps / cells.direct.c32.rps,
      recordingOnVsOffThroughputC32: off ? run.c32.rps / off.c32.rps : null,
      recordingInterleavedC32: interleaved,
      recordingAddedP50C1Ms: off ? run.c1.p50ms - off.c1.p50ms : null,
      runVsNodeProxyThroughputC32: run.c32.rps / cells['node proxy (floor)'].c32.rps,
    };
    return {
      scenario: 'sync',
      secondsPerCell: o.seconds,
      requestBody: BODY,
      cells,
      requestEventsRecorded: rows[0].n,
      ratios,
      targets: { runVsNginxProxyThroughputC32: '>= 0.5', runAddedP50OverDirectC1Ms: '< 1' },
      met: { throughput: ratios.runVsNginxProxyThroughputC32 >= 0.5, latency: ratios.runAddedP50OverDirectC1Ms < 1 },
    };
  } finally {
    await stopProcess(nodeProxy.child);
  }
}
