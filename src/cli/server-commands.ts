// The commands that open the database or start the server: `serve`, `migrate` and `token`. main.ts
// imports this module only when one of them runs, so the client commands and --help never load the
// server, Fastify or the database drivers.
import { parseArgs } from 'node:util';
import { createToken, listTokens, revokeToken } from '../app/tokens.ts';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { startServer } from '../main.ts';
import { migrateToLatest } from '../store/migrate.ts';
import { CliError } from './client.ts';
import { formatTokenTable } from './format.ts';

type Out = { log: (s: string) => void; err: (s: string) => void };

async function withDatabase<T>(fn: (db: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
  const database = openDatabase(loadConfig());
  try {
    await migrateToLatest(database);
    return await fn(database);
  } finally {
    await database.close();
  }
}

/** `mainline serve`: runs until SIGTERM or SIGINT (a second one exits at once). */
export async function serve(): Promise<number> {
  const server = await startServer(loadConfig());
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      server.app.log.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    server.app.log.info(`${signal}: shutting down`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        server.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return new Promise<number>(() => undefined);
}

/** `mainline migrate`. */
export async function migrate(out: Out): Promise<number> {
  const database = openDatabase(loadConfig());
  try {
    const report = await migrateToLatest(database);
    out.log(
      report.applied.length === 0
        ? `${database.engine} database at ${database.location} is up to date (${report.known.length} migrations)`
        : `applied ${report.applied.join(', ')} to the ${database.engine} database at ${database.location}`,
    );
    return 0;
  } finally {
    await database.close();
  }
}

/** `mainline token create|list|revoke`. */
export async function token(args: string[], out: Out): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { org: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
  });
  const [verb, ...rest] = positionals;
  if (verb === 'create') {
    if (values.org === undefined) throw new CliError('token create needs --org <slug>', 2, true);
    const created = await withDatabase((d) =>
      createToken(d.db, { orgSlug: values.org as string, name: values.name ?? 'cli', now: Date.now() }),
    );
    if (values.json) out.log(JSON.stringify({ id: created.id, org: created.orgSlug, token: created.token }));
    else out.log(created.token);
    out.err(
      `${created.orgCreated ? `created organization "${created.orgSlug}" and ` : ''}created token ${created.id} for "${created.orgSlug}". It is shown only this once: store it now.`,
    );
    return 0;
  }
  if (verb === 'list') {
    const rows = await withDatabase((d) => listTokens(d.db, values.org));
    out.log(values.json ? JSON.stringify(rows) : formatTokenTable(rows));
    return 0;
  }
  if (verb === 'revoke') {
    const id = rest[0];
    if (id === undefined)
      throw new CliError('token revoke needs the token id (see mainline token list)', 2, true);
    await withDatabase((d) => revokeToken(d.db, id, Date.now()));
    out.err(`revoked token ${id}`);
    return 0;
  }
  throw new CliError(`unknown token command "${verb ?? ''}"`, 2, true);
}
