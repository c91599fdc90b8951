import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(async () => {
  await stack?.close();
});

interface Operation {
  summary?: string;
  tags?: string[];
  operationId?: string;
  security?: unknown[];
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}

it('documents every route from the TypeBox schemas: summary, tags, success and error responses', async () => {
  const res = await fetch(`${stack.baseUrl}/openapi.json`);
  expect(res.status).toBe(200);
  const doc = (await res.json()) as { openapi: string; info: { version: string }; paths: Record<string, Record<string, Operation>>; tags: { name: string }[] };
  expect(doc.openapi).toMatch(/^3\./);
  expect(doc.info.version).toBe('1.0.0');
  const declaredTags = new Set(doc.tags.map((t) => t.name));
  const ops = Object.entries(doc.paths).flatMap(([p, methods]) => Object.entries(methods).map(([m, op]) => ({ id: `${m.toUpperCase()} ${p}`, op })));
  expect(ops.length).toBeGreaterThanOrEqual(10);
  for (const { id, op } of ops) {
    expect(op.summary, `${id}: summary`).toBeTruthy();
    expect(op.tags?.length, `${id}: tags`).toBeGreaterThan(0);
    for (const t of op.tags!) expect(declaredTags.has(t), `${id}: tag ${t} declared`).toBe(true);
    const codes = Object.keys(op.responses ?? {});
    expect(codes.some((c) => /^(1|2|3)/.test(c)), `${id}: a success response`).toBe(true);
    // Authenticated routes say what a bad or foreign token gets.
    if (id.includes(' /v2/') || id.includes(' /v4/')) {
      expect(codes, `${id}: 401`).toContain('401');
      expect(codes, `${id}: 403`).toContain('403');
      for (const c of codes.filter((c) => /^[45]/.test(c))) {
        const schema = JSON.stringify(op.responses![c].content?.['application/json']?.schema ?? {});
        expect(schema, `${id}: ${c} is {"message"}`).toContain('message');
      }
    }
  }
  // The contract's routes are all there.
  const paths = Object.keys(doc.paths);
  for (const p of ['/v4/{project_id}/{app_name}/run', '/v2/projects/{project_id}/apps/{app_id}/dashboard-metrics', '/v4/{project_id}/{app_name}/runs/{run_id}/webhook']) {
    expect(paths).toContain(p);
  }
  // Swagger UI is served too.
  expect((await fetch(`${stack.baseUrl}/docs/`)).status).toBe(200);
});
