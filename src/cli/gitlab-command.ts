import { parseArgs } from 'node:util';
import { grantNamespace, listNamespaceGrants, revokeNamespace } from '../app/gitlab/grants.ts';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../store/migrate.ts';
import { CliError } from './client.ts';

type Out = { log: (s: string) => void; err: (s: string) => void };

/**
 * `mainline gitlab grant|revoke --org <slug> --namespace <group[/sub]>`, `mainline gitlab list`:
 * which organization may act on a GitLab namespace's projects (docs/gitlab.md).
 */
export async function gitlabCommand(args: string[], out: Out): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { org: { type: 'string' }, namespace: { type: 'string' }, json: { type: 'boolean' } },
  });
  const [verb] = positionals;
  const config = loadConfig();
  const host = config.gitlab?.host ?? 'gitlab.com';
  const database = openDatabase(config);
  try {
    await migrateToLatest(database);
    const db = database.db;
    if (verb === 'grant' || verb === 'revoke') {
      const org = required(values.org, `gitlab ${verb} needs --org <slug>`);
      const namespace = required(values.namespace, `gitlab ${verb} needs --namespace <group or user path>`);
      if (verb === 'grant') {
        const { created } = await grantNamespace(db, { orgSlug: org, host, namespace, now: Date.now() });
        out.err(
          `${created ? 'granted' : 'already granted'}: organization "${org}" may act on ${host}/${namespace}`,
        );
      } else {
        await revokeNamespace(db, { orgSlug: org, host, namespace });
        out.err(`revoked: organization "${org}" may no longer act on ${host}/${namespace}`);
      }
      return 0;
    }
    if (verb === 'list') {
      const rows = await listNamespaceGrants(db, host, values.org);
      if (values.json) {
        out.log(
          JSON.stringify(
            rows.map((r) => ({
              org: r.org_slug,
              host: r.host_key,
              namespace: r.owner,
              grantedAt: new Date(r.created_at).toISOString(),
            })),
          ),
        );
      } else {
        out.log(
          ['ORG\tHOST\tNAMESPACE', ...rows.map((r) => `${r.org_slug}\t${r.host_key}\t${r.owner}`)].join('\n'),
        );
      }
      return 0;
    }
    throw new CliError(`unknown gitlab command "${verb ?? ''}"`, 2, true);
  } finally {
    await database.close();
  }
}

function required(value: string | undefined, message: string): string {
  if (value === undefined || value === '') throw new CliError(message, 2, true);
  return value;
}
