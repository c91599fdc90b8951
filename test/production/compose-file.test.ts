import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARS } from '../../config/config.js';
import { buildProgram } from '../../cli/program.js';

// No Docker engine here: the compose file and Dockerfile are checked for structure and for agreeing
// with the code (config names, entry points, bundle path), which is where they silently rot.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, {
    image?: string;
    build?: unknown;
    command?: string[];
    environment?: Record<string, string>;
    depends_on?: Record<string, { condition: string }>;
    healthcheck?: { test: string[] };
    deploy?: { replicas?: number };
    ports?: string[];
  }>;
  volumes?: Record<string, unknown>;
};
const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const services = compose.services;
const ours = Object.entries(services).filter(([, s]) => s.image === 'runhook:latest');

describe('docker-compose.yml', () => {
  it('has every service of the production shape, the worker twice', () => {
    for (const name of ['timescaledb', 'temporal', 'temporal-ui', 'api', 'worker', 'echo', 'migrate']) expect(services, name).toHaveProperty(name);
    expect(services.timescaledb.image).toMatch(/^timescale\/timescaledb:/);
    expect(services.temporal.image).toMatch(/^temporalio\/auto-setup:/);
    expect(services['temporal-ui'].image).toMatch(/^temporalio\/ui:/);
    expect(services.worker.deploy?.replicas).toBe(2);
    expect(Object.keys(compose.volumes ?? {})).toContain('timescaledb-data');
  });

  it('gives runhook services only settings the config module knows (the example app: only what it reads)', () => {
    const known = new Set(Object.keys(CONFIG_VARS));
    const echoSource = readFileSync(path.join(ROOT, 'examples/echo/main.ts'), 'utf8');
    expect(ours.length).toBeGreaterThanOrEqual(4);
    for (const [name, s] of ours) {
      for (const key of Object.keys(s.environment ?? {})) {
        if (name === 'echo') expect(echoSource, `${name}: ${key}`).toContain(`process.env.${key}`);
        else expect(known.has(key), `${name}: ${key} is not in config/config.ts`).toBe(true);
      }
    }
  });

  it('starts in order: every dependency exists, and the awaited condition is one that service can reach', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [dep, { condition }] of Object.entries(s.depends_on ?? {})) {
        expect(services, `${name} depends on ${dep}`).toHaveProperty(dep);
        expect(['service_started', 'service_healthy', 'service_completed_successfully']).toContain(condition);
        if (condition === 'service_healthy') expect(services[dep].healthcheck, `${dep} needs a healthcheck`).toBeDefined();
      }
    }
    expect(services.api.depends_on?.migrate.condition).toBe('service_completed_successfully');
    expect(services.worker.depends_on?.migrate.condition).toBe('service_completed_successfully');
    expect(services.migrate.depends_on?.temporal.condition).toBe('service_healthy');
    expect(services.migrate.depends_on?.timescaledb.condition).toBe('service_healthy');
  });

  it('runs entry points and CLI commands that exist', () => {
    const commands = buildProgram(() => {}, () => { throw new Error('unused'); }).commands.map((c) => c.name());
    for (const [name, s] of ours) {
      const cmd = s.command ?? [];
      expect(cmd.slice(0, 3), name).toEqual(['node', '--import', 'tsx']);
      expect(existsSync(path.join(ROOT, cmd[3])), `${name}: ${cmd[3]}`).toBe(true);
      if (cmd[3] === 'cli/main.ts') expect(commands, `${name}: cli ${cmd[4]}`).toContain(cmd[4]);
      if (cmd[3] === 'cli/main.ts' && cmd.includes('deploy')) expect(existsSync(path.join(ROOT, cmd[cmd.length - 1]))).toBe(true);
    }
  });

  it('points the workers at a prebuilt bundle and exposes their metrics for the health check', () => {
    const env = services.worker.environment!;
    expect(env.WORKFLOW_BUNDLE_PATH).toBe('/app/dist/workflow-bundle.js');
    expect(env.WORKER_METRICS_ADDRESS).toBe('0.0.0.0:9464');
    expect(JSON.stringify(services.worker.healthcheck?.test)).toContain('9464/metrics');
    expect(services.api.environment?.HOST).toBe('0.0.0.0');
    expect(services.api.environment?.PAYLOAD_CODEC_KEY).toMatch(/\$\{PAYLOAD_CODEC_KEY:\?/);
  });
});

describe('Dockerfile', () => {
  it('builds in one stage and runs slim as a non-root user, with the bundle the compose file names', () => {
    const stages = [...dockerfile.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)].map((m) => ({ image: m[1], name: m[2] }));
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages.at(-1)!.image).toMatch(/slim/);
    expect(dockerfile).toMatch(/RUN npm run build/);
    expect(dockerfile).toMatch(/COPY --from=build/);
    expect(dockerfile).toMatch(/^USER (?!root)\S+/m);
    expect(dockerfile).toContain('WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js');
    // The build script writes exactly there (dist/workflow-bundle.js under /app).
    expect(readFileSync(path.join(ROOT, 'scripts/build-workflow-bundle.ts'), 'utf8')).toContain("'dist', 'workflow-bundle.js'");
    const nodeMajor = /node:(\d+)/.exec(stages[0].image)?.[1];
    expect(nodeMajor).toBe(process.versions.node.split('.')[0]);
  });
});

describe('docs/production.md', () => {
  it('lists every configuration variable', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/production.md'), 'utf8');
    for (const name of Object.keys(CONFIG_VARS)) expect(doc, name).toContain(`| \`${name}\` |`);
  });
});
