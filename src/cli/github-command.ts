import { parseArgs } from 'node:util';
import { connectInstallation, grantOwner, listForgeGrants, revokeOwner } from '../app/forge-grants.ts';
import { GitHubClient } from '../forge/github/client.ts';
import { CliError } from './client.ts';
import { grantOrRevoke, type Out, onServerDatabase, printGrants, required } from './forge-grant-cli.ts';

/** `mainline github …`: forge grants, which only the operator (with database access) can change. */
export async function githubCommand(args: string[], out: Out): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      org: { type: 'string' },
      owner: { type: 'string' },
      installation: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const [verb] = positionals;
  return onServerDatabase(async (db, config) => {
    const host = config.github?.host ?? 'github.com';
    const now = Date.now();
    if (verb === 'grant' || verb === 'revoke') {
      const org = required(values.org, `github ${verb} needs --org <slug>`);
      const owner = required(values.owner, `github ${verb} needs --owner <login>`);
      return grantOrRevoke(
        out,
        verb,
        { org, host, owner },
        {
          grant: () => grantOwner(db, { orgSlug: org, host, owner, now }),
          revoke: () => revokeOwner(db, { orgSlug: org, host, owner }),
        },
      );
    }
    if (verb === 'connect') {
      const org = required(values.org, 'github connect needs --org <slug>');
      const raw = required(values.installation, 'github connect needs --installation <id>');
      const installationId = Number(raw);
      if (!Number.isSafeInteger(installationId) || installationId <= 0)
        throw new CliError(`--installation must be the installation's numeric id, not "${raw}"`, 2);
      const gh = config.github;
      if (gh === undefined || gh.auth.kind !== 'app') {
        throw new CliError(
          'github connect needs a GitHub App (MAINLINE_GITHUB_APP_ID and MAINLINE_GITHUB_PRIVATE_KEY); with a token use mainline github grant',
          1,
        );
      }
      const client = new GitHubClient({ baseUrl: gh.apiUrl, auth: gh.auth });
      const { grant } = await connectInstallation(db, (id) => client.installationAccount(id), {
        orgSlug: org,
        host,
        installationId,
        now,
      });
      out.err(`connected installation ${installationId} (${host}/${grant.owner}) to organization "${org}"`);
      return 0;
    }
    if (verb === 'list') {
      return printGrants(out, values.json, await listForgeGrants(db, values.org), [
        { header: 'ORG', key: 'org', value: (r) => r.org_slug },
        { header: 'HOST', key: 'host', value: (r) => r.host_key },
        { header: 'OWNER', key: 'owner', value: (r) => r.owner },
        { header: 'INSTALLATION', key: 'installationId', value: (r) => r.installation_id },
        { key: 'grantedAt', value: (r) => new Date(r.created_at).toISOString() },
      ]);
    }
    throw new CliError(`unknown github command "${verb ?? ''}"`, 2, true);
  });
}
