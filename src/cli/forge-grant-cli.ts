import { type Config, loadConfig } from '../config.ts';
import type { Queryable } from '../db/bulk.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../store/migrate.ts';
import { CliError } from './client.ts';

export type Out = { log: (s: string) => void; err: (s: string) => void };

/** Runs an operator's grant command on the server's own database (migrated first), closing it after. */
export async function onServerDatabase(
  fn: (db: Queryable, config: Config) => Promise<number>,
): Promise<number> {
  const config = loadConfig();
  const database = openDatabase(config);
  try {
    await migrateToLatest(database);
    return await fn(database.db, config);
  } finally {
    await database.close();
  }
}

/** A flag the command cannot do without (usage error, exit code 2). */
export function required(value: string | undefined, message: string): string {
  if (value === undefined || value === '') throw new CliError(message, 2, true);
  return value;
}

/** `grant` or `revoke` of an account or namespace on a forge host, with the line saying what was done. */
export async function grantOrRevoke(
  out: Out,
  verb: 'grant' | 'revoke',
  input: { org: string; host: string; owner: string },
  act: { grant: () => Promise<{ created: boolean }>; revoke: () => Promise<unknown> },
): Promise<number> {
  const where = `${input.host}/${input.owner}`;
  if (verb === 'grant') {
    const { created } = await act.grant();
    out.err(`${created ? 'granted' : 'already granted'}: organization "${input.org}" may act on ${where}`);
  } else {
    await act.revoke();
    out.err(`revoked: organization "${input.org}" may no longer act on ${where}`);
  }
  return 0;
}

/**
 * The grants as JSON objects (--json) or a tab-separated table with a header line; a column without
 * a header is in the JSON only, one without a key in the table only.
 */
export function printGrants<R>(
  out: Out,
  json: boolean | undefined,
  rows: readonly R[],
  columns: readonly { header?: string; key?: string; value: (r: R) => string | number | null }[],
): number {
  if (json) {
    const keyed = columns.filter((c) => c.key !== undefined);
    out.log(JSON.stringify(rows.map((r) => Object.fromEntries(keyed.map((c) => [c.key, c.value(r)])))));
  } else {
    const shown = columns.filter((c) => c.header !== undefined);
    out.log(
      [
        shown.map((c) => c.header).join('\t'),
        ...rows.map((r) => shown.map((c) => c.value(r) ?? '-').join('\t')),
      ].join('\n'),
    );
  }
  return 0;
}
