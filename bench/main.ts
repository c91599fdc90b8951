// `npm run bench [sync|async|metrics|webhooks] [options]`. No scenario runs sync and async on one
// stack. See docs/benchmarks.md for what each measures.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBenchTools } from './bench-tools.js';
import { startBenchStack, type BenchApiSpec, type BenchStack } from './bench-stack.js';
import { startNginxPair, type NginxPair } from './nginx.js';
import { runSyncOverheadBench, type SyncOverheadResult } from './sync-overhead.js';
import { runAsyncAcceptBench, type AsyncAcceptResult } from './async-accept.js';
import { formatTable, fmt, machineInfo, RESULTS_DIR, timestamp, writeResult } from './report.js';
import { summarizeCpuProfiles } from './cpu-profile-summary.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUN_PATH_SCENARIOS = ['sync', 'async'] as const;
const EXTERNAL_SCENARIOS = {
  metrics: { file: './metrics.js', run: 'runMetricsBench', parse: 'parseMetricsBenchArgs', owner: 'the dashboard-metrics feature' },
  webhooks: { file: './webhooks.js', run: 'runWebhookBench', parse: 'parseWebhookBenchArgs', owner: 'the webhooks feature' },
} as const;
const USAGE = `usage: npm run bench [sync|async|metrics|webhooks] [options]
  (no scenario)        sync and async on one stack
  sync / async options:
    --duration N       seconds per measured cell (default 10)
    --warmup N         seconds of warm-up per target (default 3)
    --rate N           offered async runs/s for the fixed-rate cells (default 50)
    --concurrency N    callers for the async max-throughput cells (default 32)
    --no-recording-off skip the /run row with event recording off
    --profile          write V8 CPU profiles of the API process and print where its time goes
    --max-minutes N    stop everything and fail after N minutes (default 20)
  metrics / webhooks: options are passed to that scenario (see docs/benchmarks.md)`;

interface RunPathOptions {
  seconds: number;
  warmupSeconds: number;
  rate: number;
  concurrency: number;
  recordingOff: boolean;
  profile: boolean;
  maxMinutes: number;
}

function parseRunPathArgs(argv: string[]): RunPathOptions {
  const o: RunPathOptions = { seconds: 10, warmupSeconds: 3, rate: 50, concurrency: 32, recordingOff: true, profile: false, maxMinutes: 20 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v <= 0) throw new Error(`${a}: expected a positive number\n${USAGE}`);
      return v;
    };
    if (a === '--duration') o.seconds = num();
    else if (a === '--warmup') o.warmupSeconds = num();
    else if (a === '--rate') o.rate = num();
    else if (a === '--concurrency') o.concurrency = Math.round(num());
    else if (a === '--no-recording-off') o.recordingOff = false;
    else if (a === '--profile') o.profile = true;
    else if (a === '--max-minutes') o.maxMinutes = num();
    else throw new Error(`unknown option ${a}\n${USAGE}`);
  }
  return o;
}

const log = (line: string) => console.error(`[bench] ${line}`);

function printSync(r: SyncOverheadResult): void {
  console.log(`\nsync overhead: POST ${r.requestBody} (wrk, ${r.secondsPerCell}s per cell)`);
  console.log(
    formatTable(
      ['target', 'c=1 req/s', 'p50 ms', 'p99 ms', 'c=32 req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'PG µs/req', 'errors'],
      Object.entries(r.cells).map(([name, c]) => [name, c.c1.rps, c.c1.p50ms, c.c1.p99ms, c.c32.rps, c.c32.p50ms, c.c32.p99ms, c.c32.serverCpuUsPerRequest, c.c32.postgresCpuUsPerRequest, String(c.c1.errors + c.c32.errors)]),
    ),
  );
  const x = r.ratios;
  console.log(`  /run vs nginx proxy throughput at c=32: ${fmt(x.runVsNginxProxyThroughputC32)}x (target >= 0.5x) ${r.met.throughput ? 'MET' : 'MISSED'}`);
  console.log(`  /run p50 added over direct at c=1: ${fmt(x.runAddedP50OverDirectC1Ms)} ms (target < 1 ms) ${r.met.latency ? 'MET' : 'MISSED'}`);
  console.log(`  nginx proxy vs direct at c=32: ${fmt(x.nginxProxyVsDirectThroughputC32)}x`);
  if (x.recordingOnVsOffThroughputC32 !== null) console.log(`  /run recording on vs off at c=32, the two long cells above (drift included): ${fmt(x.recordingOnVsOffThroughputC32)}x`);
  const ab = x.recordingInterleavedC32;
  if (ab) {
    const iqr = (v: { p25: number; p75: number }) => `IQR ${v.p25}-${v.p75}`;
    console.log(`  recording on vs off at c=32, ${ab.rounds} interleaved rounds of ${ab.secondsPerCell}s (on, off, second off; bench/recording-ab.ts):`);
    console.log(`    on / mean of the two off APIs: median ${fmt(ab.onVsOff.median)}x (${iqr(ab.onVsOff)}; rounds ${ab.onVsOff.perRound.join(', ')})`);
    console.log(`    A/A control, second off / first off: median ${fmt(ab.aa.median)}x (${iqr(ab.aa)}; rounds ${ab.aa.perRound.join(', ')})`);
    console.log(`    API + PostgreSQL CPU µs per request, on minus off: median ${ab.cpuAddedUs.median} (${iqr(ab.cpuAddedUs)}); A/A ${ab.cpuAaUs.median} (${iqr(ab.cpuAaUs)})`);
    console.log(`    ${ab.notMeasurablySlower ? 'on vs off is not below the A/A interquartile range: not measurably slower' : 'on vs off lies BELOW the A/A interquartile range: measurably slower'}`);
  }
  if (x.recordingAddedP50C1Ms !== null) console.log(`  /run p50 added by recording at c=1: ${x.recordingAddedP50C1Ms.toFixed(2)} ms`);
  console.log(`  /run vs node proxy (floor: node:http + undici, no features) at c=32: ${fmt(x.runVsNodeProxyThroughputC32)}x`);
  console.log('  CPU µs/req: CPU time of the server under test per request at c=32 (app nginx, proxy nginx, API process)');
  console.log('  PG µs/req: CPU time of all PostgreSQL processes per request at c=32 (run log and event writes; same 2 cores)');
  console.log(`  request events recorded during the run: ${r.requestEventsRecorded.toLocaleString('en-US')}`);
}

function printAsync(r: AsyncAcceptResult): void {
  console.log(`\nasync accept: ${r.secondsPerCell}s per cell, worker draining the queue`);
  console.log(
    formatTable(
      ['how', 'runs/s', 'p50 ms', 'p99 ms', 'max ms', 'errors'],
      Object.entries(r.cells).map(([name, c]) => [name, c.rps, c.p50ms, c.p99ms, c.maxMs, String(c.errors)]),
    ),
  );
  const x = r.ratios;
  console.log(`  /run?async=true vs raw workflow.start at max: ${fmt(x.runVsRawMaxThroughput)}x (target >= 0.9x) ${r.met.throughput ? 'MET' : 'MISSED'}`);
  console.log(`  /run?async=true p99 at ${r.offeredRate}/s: ${fmt(x.runP99AtRateMs)} ms (target < 25 ms) ${r.met.latency ? 'MET' : 'MISSED'}; raw: ${fmt(x.rawP99AtRateMs)} ms${x.commitP99AtRateMs !== null ? `; a lone PostgreSQL INSERT commit at the same time: ${fmt(x.commitP99AtRateMs)} ms` : ''}`);
  if (x.runP99AtRateWorkerPausedMs !== null) console.log(`  /run?async=true p99 at ${r.offeredRate}/s with the worker paused (the accept path alone, nothing draining): ${fmt(x.runP99AtRateWorkerPausedMs)} ms${x.commitP99AtRateWorkerPausedMs !== null ? `; a lone PostgreSQL INSERT commit at the same time: ${fmt(x.commitP99AtRateWorkerPausedMs)} ms` : ''}`);
}

async function runPathScenarios(scenarios: readonly ('sync' | 'async')[], argv: string[]): Promise<void> {
  const o = parseRunPathArgs(argv);
  const started = timestamp();
  const machine = machineInfo();
  log(`scenarios ${scenarios.join(', ')}; load average ${(machine.loadAverageAtStart as number[]).join(' ')} on ${machine.cpus} cores`);
  const tools = ensureBenchTools(log);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'runhook-bench-'));
  const profileDir = o.profile ? path.join(RESULTS_DIR, `profiles-${started}`) : null;
  const withSync = scenarios.includes('sync');
  const apis: BenchApiSpec[] = [{ name: 'api' }];
  if (withSync && o.recordingOff) {
    // A second API with recording off is the A/A control: two processes that differ in nothing.
    apis.push({ name: 'api (recording off)', env: { EVENT_RECORDING: 'false' } }, { name: 'api (recording off, control)', env: { EVENT_RECORDING: 'false' } });
  }

  let stack: BenchStack | undefined;
  let nginx: NginxPair | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await stack?.stop().catch((err) => log(`stopping the stack: ${(err as Error).message}`));
      await nginx?.stop();
      await rm(dir, { recursive: true, force: true });
    })());
  const abort = (why: string) => {
    log(`${why}; stopping everything`);
    void cleanup().finally(() => process.exit(1));
  };
  const watchdog = setTimeout(() => abort(`still running after ${o.maxMinutes} minutes (--max-minutes)`), o.maxMinutes * 60_000);
  watchdog.unref();
  process.once('SIGINT', () => abort('interrupted'));
  process.once('SIGTERM', () => abort('terminated'));

  const results: { scenario: string; result: object }[] = [];
  try {
    nginx = await startNginxPair(tools.nginx, path.join(dir, 'nginx'));
    stack = await startBenchStack({
      dir,
      apis,
      worker: scenarios.includes('async'),
      log,
      apiNodeFlags: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    });
    for (const scenario of scenarios) {
      const common = { machine, startedAt: started, options: o };
      if (scenario === 'sync') {
        const r = await runSyncOverheadBench({
          stack, nginx, wrk: tools.wrk, dir, seconds: o.seconds, warmupSeconds: o.warmupSeconds, log,
          apiName: 'api', apiNoRecordingName: o.recordingOff ? 'api (recording off)' : undefined,
          apiControlName: o.recordingOff ? 'api (recording off, control)' : undefined,
        });
        results.push({ scenario, result: { ...r, ...common } });
        printSync(r);
      } else {
        const r = await runAsyncAcceptBench({
          stack, appUrl: nginx.appUrl, apiName: 'api', seconds: o.seconds, warmupSeconds: o.warmupSeconds, rate: o.rate, concurrency: o.concurrency, log,
        });
        results.push({ scenario, result: { ...r, ...common } });
        printAsync(r);
      }
    }
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
  const loadAtEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
  console.log(`\nload average at start ${(machine.loadAverageAtStart as number[]).join(' ')}, at end ${loadAtEnd.join(' ')} (${machine.cpus} cores)`);
  for (const { scenario, result } of results) {
    const file = await writeResult(scenario, { ...result, loadAverageAtEnd: loadAtEnd });
    console.log(`results: ${path.relative(process.cwd(), file)}`);
  }
  if (profileDir) {
    for (const p of await summarizeCpuProfiles(profileDir, ROOT)) {
      console.log(`\nCPU profile ${path.relative(process.cwd(), p.file)} (self time, idle excluded)`);
      console.log(formatTable(['package', 'self %'], p.byPackage.slice(0, 12).map((l) => [l.where, l.selfPercent])));
      console.log(formatTable(['function', 'self %'], p.lines.map((l) => [l.where, l.selfPercent])));
    }
  }
}

/** Scenarios other features own, loaded only when asked for so a missing one is a clear message. */
async function externalScenario(name: keyof typeof EXTERNAL_SCENARIOS, argv: string[]): Promise<void> {
  const spec = EXTERNAL_SCENARIOS[name];
  let mod: Record<string, unknown>;
  try {
    mod = (await import(spec.file)) as Record<string, unknown>;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_MODULE_NOT_FOUND' && e.message.includes(path.basename(spec.file, '.js'))) {
      throw new Error(`the ${name} benchmark is not there yet: bench/${path.basename(spec.file, '.js')}.ts (${spec.owner}) is missing`);
    }
    throw err;
  }
  const run = mod[spec.run];
  if (typeof run !== 'function') throw new Error(`bench/${path.basename(spec.file, '.js')}.ts does not export ${spec.run}()`);
  const parse = mod[spec.parse];
  const result = (await run(typeof parse === 'function' ? parse(argv) : argv)) as object | undefined;
  // The metrics benchmark writes its own results file; others get theirs written here.
  if (result && name !== 'metrics') console.log(`results: ${path.relative(process.cwd(), await writeResult(name, result))}`);
}

async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h') {
    console.log(USAGE);
    return;
  }
  if (first === undefined || first.startsWith('--')) return runPathScenarios(RUN_PATH_SCENARIOS, argv);
  if (first === 'sync' || first === 'async') return runPathScenarios([first], rest);
  if (first in EXTERNAL_SCENARIOS) return externalScenario(first as keyof typeof EXTERNAL_SCENARIOS, rest);
  throw new Error(`unknown scenario ${JSON.stringify(first)}\n${USAGE}`);
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  console.error(`bench failed: ${(err as Error).message}`);
  process.exitCode = 1;
}
