import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/program.js';
import { createPool } from '../db/pool.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';
import { hashToken } from '../lib/tokens.js';

let db: TestDatabase;
let dir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  process.env.DATABASE_URL = db.url;
  dir = await mkdtemp(path.join(os.tmpdir(), 'runhook-cli-'));
});
afterAll(async () => {
  await db?.drop();
});

async function cli(...args: string[]) {
  const lines: string[] = [];
  const errors: string[] = [];
  const origError = console.error;
  console.error = (...a: unknown[]) => void errors.push(a.join(' '));
  try {
    const code = await runCli(args, (l) => lines.push(l));
    return { code, lines, last: lines.at(-1) ?? '', errors: errors.join('\n') };
  } finally {
    console.error = origError;
  }
}

const TOML = `[app]
name = "echo"
url = "http://127.0.0.1:9000/run"
[hardware]
cpu = 2
memory = 8.0
compute = "CPU"
gpu_count = 0
[scaling]
response_grace_period = 900
`;

async function file(name: string, text: string) {
  const p = path.join(dir, name);
  await writeFile(p, text);
  return p;
}

describe('service-account commands', () => {
  it('creates a token shown once, alone on the last line, stored only as a hash', async () => {
    const r = await cli('service-account', 'create', '--project', 'p1', '--name', 'ci', '--expires', '2099-01-01T00:00:00Z');
    expect(r.code).toBe(0);
    expect(r.last).toMatch(/^rh_[A-Za-z0-9_-]{43}$/);
    // 32 random bytes behind the prefix: at least 256 bits.
    expect(Buffer.from(r.last.slice(3), 'base64url')).toHaveLength(32);
    const pool = createPool(db.url, 1);
    const { rows } = await pool.query('SELECT * FROM service_accounts WHERE name = $1', ['ci']);
    await pool.end();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows[0])).not.toContain(r.last.slice(3));
    expect(rows[0].token_hash.equals(hashToken(r.last))).toBe(true);
    expect(rows[0].expires_at.toISOString()).toBe('2099-01-01T00:00:00.000Z');
  });

  it('lists without tokens and revokes', async () => {
    const created = await cli('service-account', 'create', '--project', 'p1', '--name', 'tmp');
    const list = await cli('service-account', 'list', '--project', 'p1');
    const accounts = JSON.parse(list.last) as { id: string; name: string; token: string }[];
    expect(list.last).not.toContain(created.last);
    const tmp = accounts.find((a) => a.name === 'tmp')!;
    expect(tmp.token).toMatch(/^rh_.{4}…/);
    const revoked = await cli('service-account', 'revoke', tmp.id);
    expect(revoked.code).toBe(0);
    const after = JSON.parse((await cli('service-account', 'list')).last) as { id: string; revoked_at: string | null }[];
    expect(after.find((a) => a.id === tmp.id)!.revoked_at).not.toBeNull();
  });

  it('rejects bad input with a message', async () => {
    expect((await cli('service-account', 'create', '--project', 'p1', '--name', 'x', '--expires', 'tomorrow')).code).not.toBe(0);
    const past = await cli('service-account', 'create', '--project', 'p1', '--name', 'x', '--expires', '2001-01-01');
    expect(past.code).toBe(2);
    expect(past.errors).toMatch(/--expires/);
    const missing = await cli('service-account', 'revoke', '999999');
    expect(missing.code).toBe(2);
    expect(missing.errors).toMatch(/no service account/);
  });
});

describe('app commands', () => {
  it('deploys an app and prints its JSON with app_id on the last line; redeploy updates it', async () => {
    const r = await cli('app', 'deploy', '--project', 'p1', await file('app.toml', TOML));
    expect(r.code).toBe(0);
    const app = JSON.parse(r.last);
    expect(app).toMatchObject({ app_id: 'p1-echo', name: 'echo', hardware: { cpu: 2, memory: 8, compute: 'CPU', gpu_count: 0 }, scaling: { response_grace_period: 900 } });
    const again = await cli('app', 'deploy', '--project', 'p1', await file('app2.toml', TOML.replace('= 900', '= 60')));
    expect(JSON.parse(again.last).scaling.response_grace_period).toBe(60);
    const list = JSON.parse((await cli('app', 'list', '--project', 'p1')).last);
    expect(list.map((a: { app_id: string }) => a.app_id)).toEqual(['p1-echo']);
  });

  it('defaults response_grace_period to 900 s', async () => {
    const text = TOML.replace('[scaling]\nresponse_grace_period = 900\n', '').replace('"echo"', '"nograce"');
    const r = await cli('app', 'deploy', '--project', 'p1', await file('nograce.toml', text));
    expect(JSON.parse(r.last).scaling.response_grace_period).toBe(900);
  });

  const invalid: [string, string, RegExp][] = [
    ['a bad name', TOML.replace('"echo"', '"Echo_1"'), /app\.name/],
    ['a missing url', TOML.replace('url = "http://127.0.0.1:9000/run"\n', ''), /app\.url/],
    ['a relative url', TOML.replace('http://127.0.0.1:9000/run', '/run'), /app\.url/],
    ['a non-http url', TOML.replace('http://127.0.0.1:9000/run', 'ftp://x/run'), /app\.url/],
    ['cpu not a number', TOML.replace('cpu = 2', 'cpu = "two"'), /hardware\.cpu/],
    ['negative memory', TOML.replace('memory = 8.0', 'memory = -1.0'), /hardware\.memory/],
    ['a grace period over 12 h', TOML.replace('= 900', '= 43201'), /scaling\.response_grace_period/],
    ['a fractional gpu_count', TOML.replace('gpu_count = 0', 'gpu_count = 0.5'), /hardware\.gpu_count/],
    ['a GPU type without GPUs', TOML.replace('"CPU"', '"AMPERE_A10"'), /hardware\.gpu_count/],
    ['an unknown field', TOML.replace('[scaling]', '[scaling]\nmin_replicas = 1'), /scaling\.min_replicas/],
    ['broken TOML', '[app\nname=', /invalid TOML/],
  ];
  for (const [what, text, field] of invalid) {
    it(`rejects ${what}, naming the field`, async () => {
      const r = await cli('app', 'deploy', '--project', 'p1', await file('bad.toml', text));
      expect(r.code).toBe(2);
      expect(r.errors).toMatch(field);
    });
  }

  it('deletes an app', async () => {
    expect((await cli('app', 'delete', '--project', 'p1', 'nograce')).code).toBe(0);
    expect((await cli('app', 'delete', '--project', 'p1', 'nograce')).code).toBe(2);
  });

  it('works as a real process: npm run cli prints the token alone on the last line of stdout', () => {
    const r = spawnSync('npx', ['tsx', 'cli/main.ts', 'service-account', 'create', '--project', 'p9', '--name', 'proc'], {
      cwd: path.resolve(__dirname, '..'),
      env: { ...process.env, DATABASE_URL: db.url },
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/^rh_[A-Za-z0-9_-]{43}$/);
  });
});
