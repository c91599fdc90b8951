import { readdirSync, readFileSync } from 'node:fs';

// Linux reports CPU time in clock ticks; USER_HZ is 100 on every mainstream kernel build.
const TICKS_PER_SECOND = 100;

/** User plus system CPU time of a process and all its threads, in ms (Linux /proc); 0 when it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name, which may itself contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** The direct children of a process (nginx's workers under its master). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Every process whose command name is `name` (e.g. all PostgreSQL backends and its helpers). */
export function pidsNamed(name: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU ms used by a set of processes, sampled now. */
export function cpuMsOf(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
}
