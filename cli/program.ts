import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError } from 'commander';
import type { Pool } from 'pg';
import { loadConfig } from '../config/config.js';
import { createPool } from '../db/pool.js';
import { ensureDatabase, migrate } from '../db/migrate.js';
import { appsRepository, appToJson } from '../db/repositories/apps.js';
import { serviceAccountsRepository } from '../db/repositories/service-accounts.js';
import { ManifestError, parseAppManifest } from '../lib/app-manifest.js';
import { registerEventsCommands } from './events-import.js';
import { ensureSearchAttributes } from '../lib/search-attributes.js';

export class CliError extends Error {}

const PROJECT_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;

function projectId(value: string): string {
  if (!PROJECT_RE.test(value)) throw new InvalidArgumentError('expected lowercase letters, digits and -, 1 to 63 characters');
  return value;
}

function rfc3339(value: string): Date {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/i.test(value)) {
    throw new InvalidArgumentError('expected an RFC 3339 date such as 2027-01-31 or 2027-01-31T00:00:00Z');
  }
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new InvalidArgumentError('not a real date');
  return d;
}

/** Builds the CLI. Output goes through `out` so tests can capture it; the last line is the result. */
export function buildProgram(out: (line: string) => void, getPool: () => Pool): Command {
  const program = new Command('runhook').description('runhook operator CLI').exitOverride();
  const json = (v: unknown) => out(JSON.stringify(v));

  program
    .command('migrate')
    .description('create the database if missing and apply migrations')
    .action(async () => {
      const { databaseUrl } = loadConfig();
      if (await ensureDatabase(databaseUrl)) out('created database');
      const res = await migrate(databaseUrl, out);
      out(`migrations up to date (${res.applied.length} applied, backend ${res.backend})`);
    });

  program
    .command('setup')
    .description('migrate (creating the database if missing) and register the search attributes on Temporal; idempotent')
    .action(async () => {
      const { databaseUrl, temporalAddress, temporalNamespace } = loadConfig();
      if (await ensureDatabase(databaseUrl)) out('created database');
      const res = await migrate(databaseUrl, out);
      out(`migrations up to date (${res.applied.length} applied, backend ${res.backend})`);
      const added = await ensureSearchAttributes(temporalAddress, temporalNamespace);
      out(added.length ? `search attributes added: ${added.join(', ')}` : 'search attributes already registered');
    });

  const sa = program.command('service-account').description('manage service-account tokens');
  sa.command('create')
    .requiredOption('--project <project_id>', 'project the token grants access to', projectId)
    .requiredOption('--name <name>', 'a name that says where the token is used')
    .option('--expires <date>', 'RFC 3339 expiry date', rfc3339)
    .description('create a service account; prints its token once, alone on the last line')
    .action(async (o: { project: string; name: string; expires?: Date }) => {
      if (o.expires && o.expires.getTime() <= Date.now()) throw new CliError('--expires: must be in the future');
      const { account, token } = await serviceAccountsRepository(getPool()).create(o.project, o.name, o.expires ?? null);
      out(`created service account ${account.id} "${account.name}" for project ${account.projectId}` +
        (account.expiresAt ? `, expires ${account.expiresAt.toISOString()}` : ', no expiry') + '. The token is shown only once:');
      out(token);
    });
  sa.command('list')
    .option('--project <project_id>', 'only this project', projectId)
    .description('list service accounts (never their tokens)')
    .action(async (o: { project?: string }) => {
      const rows = await serviceAccountsRepository(getPool()).list(o.project);
      json(rows.map((a) => ({ id: a.id, project_id: a.projectId, name: a.name, token: a.tokenHint, created_at: a.createdAt, expires_at: a.expiresAt, revoked_at: a.revokedAt })));
    });
  sa.command('revoke')
    .argument('<id>', 'service account id (from list)')
    .option('--project <project_id>', 'refuse unless the account is in this project', projectId)
    .description('revoke a service account; its token stops working')
    .action(async (id: string, o: { project?: string }) => {
      if (!/^\d+$/.test(id)) throw new CliError('id: expected the numeric id shown by "service-account list"');
      const account = await serviceAccountsRepository(getPool()).revoke(id, o.project);
      if (!account) throw new CliError(`no service account ${id}${o.project ? ` in project ${o.project}` : ''}`);
      out(`revoked service account ${account.id} "${account.name}"`);
    });

  const app = program.command('app').description('manage apps');
  app.command('deploy')
    .requiredOption('--project <project_id>', 'project of the app', projectId)
    .argument('<app.toml>', 'the app definition')
    .description('register or update an app; prints its JSON on the last line')
    .action(async (file: string, o: { project: string }) => {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
      }
      let def;
      try {
        def = parseAppManifest(text);
      } catch (err) {
        if (err instanceof ManifestError) throw new CliError(`${file}: ${err.message}`);
        throw err;
      }
      json(appToJson(await appsRepository(getPool()).upsert(o.project, def)));
    });
  app.command('list')
    .option('--project <project_id>', 'only this project', projectId)
    .description('list apps as JSON')
    .action(async (o: { project?: string }) => json((await appsRepository(getPool()).list(o.project)).map(appToJson)));
  app.command('delete')
    .requiredOption('--project <project_id>', 'project of the app', projectId)
    .argument('<name>', 'app name')
    .description('delete an app (its runs and metrics stay)')
    .action(async (name: string, o: { project: string }) => {
      if (!(await appsRepository(getPool()).remove(o.project, name))) throw new CliError(`no app ${name} in project ${o.project}`);
      out(`deleted app ${o.project}-${name}`);
    });

  registerEventsCommands(program, getPool, out);
  return program;
}

export async function runCli(argv: string[], out: (line: string) => void = (l) => console.log(l)): Promise<number> {
  let pool: Pool | undefined;
  const getPool = () => (pool ??= createPool(loadConfig().databaseUrl, 2));
  const program = buildProgram(out, getPool);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string };
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return 0;
    if (e.code?.startsWith('commander.')) return e.exitCode ?? 2;
    console.error(`error: ${e.message ?? String(err)}`);
    return err instanceof CliError ? 2 : 1;
  } finally {
    await pool?.end();
  }
}
