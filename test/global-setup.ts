import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { findOrBuildTemporalCli } from '../scripts/temporal-cli.js';
import { startDevServer, type DevServer } from '../scripts/temporal-dev-server.js';
import { buildWorkflowBundle } from '../scripts/build-workflow-bundle.js';
import { buildDashboard } from '../scripts/build-dashboard.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCliPath: string;
    workflowBundlePath: string;
  }
}

let server: DevServer | undefined;
let dir: string | undefined;

/** One real Temporal dev server and one workflow bundle for the whole run; each test file gets its own database and task queues. */
export async function setup(project: TestProject) {
  const binary = await findOrBuildTemporalCli((l) => console.error(l));
  dir = await mkdtemp(path.join(os.tmpdir(), 'runhook-test-'));
  const [srv, bundle] = await Promise.all([
    startDevServer({ binary, dbFile: path.join(dir, 'temporal.sqlite') }),
    buildWorkflowBundle(path.join(dir, 'workflow-bundle.js')),
    // The API serves the built page (web/dashboard/dist): the browser tests open it.
    buildDashboard(),
  ]);
  server = srv;
  project.provide('temporalAddress', srv.address);
  project.provide('temporalCliPath', binary);
  project.provide('workflowBundlePath', bundle);
}

export async function teardown() {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}
