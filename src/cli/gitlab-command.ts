import { parseArgs } from 'node:util';
import { grantNamespace, listNamespaceGrants, revokeNamespace } from '../app/gitlab/grants.ts';
import { CliError } from './client.ts';
import { grantOrRevoke, type Out, onServerDatabase, printGrants, required } from './forge-grant-cli.ts';

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
  return onServerDatabase(async (db, config) => {
    const host = config.gitlab?.host ?? 'gitlab.com';
    if (verb === 'grant' || verb === 'revoke') {
      const org = required(values.org, `gitlab ${verb} needs --org <slug>`);
      const namespace = required(values.namespace, `gitlab ${verb} needs --namespace <group or user path>`);
      return grantOrRevoke(
        out,
        verb,
        { org, host, owner: namespace },
        {
          grant: () => grantNamespace(db, { orgSlug: org, host, namespace, now: Date.now() }),
          revoke: () => revokeNamespace(db, { orgSlug: org, host, namespace }),
        },
      );
    }
    if (verb === 'list') {
      return printGrants(out, values.json, await listNamespaceGrants(db, host, values.org), [
        { header: 'ORG', key: 'org', value: (r) => r.org_slug },
        { header: 'HOST', key: 'host', value: (r) => r.host_key },
        { header: 'NAMESPACE', key: 'namespace', value: (r) => r.owner },
        { key: 'grantedAt', value: (r) => new Date(r.created_at).toISOString() },
      ]);
    }
    throw new CliError(`unknown gitlab command "${verb ?? ''}"`, 2, true);
  });
}
