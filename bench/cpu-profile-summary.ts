import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileLine {
  selfPercent: number;
  where: string;
}

function label(n: ProfileNode, root: string): string {
  const { functionName, url, lineNumber } = n.callFrame;
  const file = url.replace(/^file:\/\//, '').replace(root + '/', '').replace(/^.*node_modules\//, 'node_modules/');
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
}

/** Self time by function over every .cpuprofile in `dir` (node --cpu-prof), biggest first. */
export async function summarizeCpuProfiles(dir: string, root: string, top = 25): Promise<{ file: string; lines: ProfileLine[]; byPackage: ProfileLine[] }[]> {
  const out = [];
  for (const f of (await readdir(dir)).filter((x) => x.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(await readFile(path.join(dir, f), 'utf8')) as CpuProfile;
    const self = new Map<string, number>();
    const pkg = new Map<string, number>();
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const hits = new Map<number, number>();
    for (const s of profile.samples ?? []) hits.set(s, (hits.get(s) ?? 0) + 1);
    let total = 0;
    for (const [id, count] of hits) {
      const n = byId.get(id)!;
      const name = label(n, root);
      if (n.callFrame.functionName === '(idle)') continue;
      total += count;
      self.set(name, (self.get(name) ?? 0) + count);
      const url = n.callFrame.url;
      const group = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? (url.startsWith('node:') ? 'node core' : url ? 'runhook' : n.callFrame.functionName);
      pkg.set(group, (pkg.get(group) ?? 0) + count);
    }
    const rank = (m: Map<string, number>) =>
      [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([where, c]) => ({ selfPercent: Math.round((c / total) * 1000) / 10, where }));
    out.push({ file: path.join(dir, f), lines: rank(self), byPackage: rank(pkg) });
  }
  return out;
}
