import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const INSTALL_SCRIPT = path.join(ROOT, 'scripts', 'install-bench-tools.sh');

export interface BenchTools {
  nginx: string;
  wrk: string;
}

function which(name: string): string | null {
  // nginx lives in /usr/sbin, which is not on a normal user's PATH.
  const r = spawnSync('sh', ['-c', `PATH="$PATH:/usr/sbin:/sbin" command -v ${name}`], { encoding: 'utf8' });
  const p = r.stdout.trim();
  return r.status === 0 && p && existsSync(p) ? p : null;
}

/** nginx and wrk, installed with scripts/install-bench-tools.sh when missing and we are root. */
export function ensureBenchTools(log: (line: string) => void): BenchTools {
  let nginx = which('nginx');
  let wrk = which('wrk');
  if (!nginx || !wrk) {
    const missing = [!nginx && 'nginx-light', !wrk && 'wrk'].filter(Boolean).join(' and ');
    if (process.getuid?.() !== 0) {
      throw new Error(`the benchmark needs ${missing}; install them with: sudo bash scripts/install-bench-tools.sh`);
    }
    log(`installing ${missing} (scripts/install-bench-tools.sh)…`);
    const r = spawnSync('bash', [INSTALL_SCRIPT], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`scripts/install-bench-tools.sh failed (exit ${r.status}); run it by hand to see why`);
    nginx = which('nginx');
    wrk = which('wrk');
    if (!nginx || !wrk) throw new Error('nginx or wrk still missing after scripts/install-bench-tools.sh');
  }
  return { nginx, wrk };
}
