import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const LOCAL_TEMPORAL = path.join(ROOT, '.tools', 'bin', 'temporal');

function onPath(): string | null {
  const r = spawnSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' });
  const p = r.stdout.trim();
  return r.status === 0 && p ? p : null;
}

/**
 * The Temporal CLI: $TEMPORAL_CLI_PATH, then `temporal` on PATH, then .tools/bin/temporal;
 * otherwise built from source with the Go toolchain (the newest tag `go install` accepts).
 */
export async function findOrBuildTemporalCli(log: (line: string) => void = (l) => console.log(l)): Promise<string> {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`TEMPORAL_CLI_PATH=${fromEnv} does not exist`);
    return fromEnv;
  }
  const found = onPath() ?? (existsSync(LOCAL_TEMPORAL) ? LOCAL_TEMPORAL : null);
  if (found) return found;
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error || go.status !== 0) {
    throw new Error(
      'The Temporal CLI is not installed and Go is missing, so it cannot be built. Install Go 1.25+ ' +
        `(https://go.dev/dl) and rerun, or put a temporal binary ${TEMPORAL_CLI_VERSION} on PATH.`,
    );
  }
  log(`Building the Temporal CLI ${TEMPORAL_CLI_VERSION} with ${go.stdout.trim()} into .tools/bin (first time only, several minutes)…`);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      'go',
      ['install', '-x', '-ldflags', `-s -w -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION.slice(1)}`, `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`],
      { env: { ...process.env, GOBIN: path.dirname(LOCAL_TEMPORAL), CGO_ENABLED: '0', GOFLAGS: '-mod=mod' }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    // `go install -x` is very chatty; show one line per package compiled or downloaded as progress.
    let packages = 0;
    let buf = '';
    child.stderr.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith('go: downloading')) log(`  ${line}`);
        else if (/^# (github|go|google|golang|modernc)/.test(line) || line.includes('/compile ')) {
          packages++;
          if (packages % 100 === 0) log(`  compiled ${packages} packages…`);
        }
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`go install failed with exit code ${code}`))));
  });
  log(`Temporal CLI ready at ${LOCAL_TEMPORAL}`);
  return LOCAL_TEMPORAL;
}

// `tsx scripts/temporal-cli.ts` prints the path, building it if needed (used by .ci/run).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  findOrBuildTemporalCli((l) => console.error(l)).then(
    (p) => console.log(p),
    (err) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
