import { parseArgs } from 'node:util';
import { connectInstallation, grantOwner, listForgeGrants, revokeOwner } from '../app/forge-grants.ts';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { GitHubClient } from '../forge/github/client.ts';
import { migrateToLatest } from '../store/migrate.ts';
import { CliError } from './client.ts';

type Out = { log: (s: string) => void; err: (s: string) => void };

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
  const config = loadConfig();
  const host = config.github?.host ?? 'github.com';
  const database = openDatabase(config);
  try {
    await migrateToLatest(database);
    const db = database.db;
    const now = Date.now();
    if (verb === 'grant' || verb === 'revoke') {
      const org = required(values.org, `github ${verb} needs --org <slug>`);
      const owner = required(values.owner, `github ${verb} needs --owner <login>`);
      if (verb === 'grant') {
        const { created } = await grantOwner(db, { orgSlug: org, host, owner, now });
        out.err(
          `${created ? 'granted' : 'already granted'}: organization "${org}" may act on ${host}/${owner}`,
        );
      } else {
        await revokeOwner(db, { orgSlug: org, host, owner });
        out.err(`revoked: organization "${org}" may no longer act on ${host}/${owner}`);
      }
      return 0;
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
      const rows = await listForgeGrants(db, values.org);
      if (values.json) {
        out.log(
          JSON.stringify(
            rows.map((r) => ({
              org: r.org_slug,
              host: r.host_key,
              owner: r.owner,
              installationId: r.installation_id,
              grantedAt: new Date(r.created_at).toISOString(),
            })),
          ),
        );
      } else {
        out.log(
          [
            'ORG\tHOST\tOWNER\tINSTALLATION',
            ...rows.map((r) => `${r.org_slug}\t${r.host_key}\t${r.owner}\t${r.installation_id ?? '-'}`),
          ].join('\n'),
        );
      }
      return 0;
    }
    throw new CliError(`unknown github command "${verb ?? ''}"`, 2, true);
  } finally {
    await database.close();
  }
}

function required(value: string | undefined, message: string): string {
  if (value === undefined || value === '') throw new CliError(message, 2, true);
  return value;
}
