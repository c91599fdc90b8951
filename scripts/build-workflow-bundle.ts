import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Webpack's progress lines stay quiet; its warnings and errors still show. */
export const QUIET_BUNDLER_LOGGER = { info() {}, warn: console.warn, error: console.error, debug() {}, trace() {}, log() {} };
export const DEFAULT_BUNDLE_PATH = path.join(ROOT, 'dist', 'workflow-bundle.js');

/** Bundles the workflows once, so workers start without running webpack (WORKFLOW_BUNDLE_PATH). */
export async function buildWorkflowBundle(outFile = DEFAULT_BUNDLE_PATH): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(ROOT, 'workflows', 'index.ts'),
    logger: QUIET_BUNDLER_LOGGER,
  });
  await mkdir(path.dirname(outFile), { recursive: true });
  await writeFile(outFile, code);
  return outFile;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildWorkflowBundle(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
  console.log(`workflow bundle written to ${path.relative(process.cwd(), out)}`);
}
