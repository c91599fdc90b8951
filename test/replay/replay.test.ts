import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';

const DIR = path.join(__dirname, 'histories');

Runtime.install({ logger: new DefaultLogger('WARN') });

async function histories() {
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => ({ file, history: historyFromJSON(JSON.parse(await readFile(path.join(DIR, file), 'utf8'))) })),
  );
}

describe('replay of recorded histories', () => {
  it('replays every history recorded from real runs with the current workflow code', async () => {
    const all = await histories();
    expect(all.length).toBeGreaterThanOrEqual(5);
    const results = Worker.runReplayHistories(
      { workflowBundle: { codePath: inject('workflowBundlePath') }, replayName: 'runhook-replay' },
      all.map(({ file, history }) => ({ workflowId: file, history })),
    );
    const failures: string[] = [];
    let count = 0;
    for await (const r of results) {
      count++;
      if (r.error) failures.push(`${r.workflowId}: ${r.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(count).toBe(all.length);
  });

  it('detects a workflow change that breaks determinism', async () => {
    // A recorded history must fail against code whose first command differs: proves the check bites.
    const [{ history }] = (await histories()).filter((h) => h.file.includes('succeeded'));
    const bundle = await import('@temporalio/worker').then((m) =>
      m.bundleWorkflowCode({ workflowsPath: path.join(__dirname, 'fixtures', 'changed-workflow.ts'), logger: quiet }),
    );
    await expect(Worker.runReplayHistory({ workflowBundle: bundle }, history)).rejects.toThrow(/[Nn]ondeterminism|DeterminismViolation/);
  });
});

const quiet = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };
