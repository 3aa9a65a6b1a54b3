import type { Config } from '../config.ts';
import type { Queryable } from '../db/bulk.ts';
import { AppError } from '../domain/errors.ts';
import * as grants from '../store/forge/grants.ts';
import { findOrgBySlug } from '../store/tenancy/orgs.ts';
import type { Caller } from './context.ts';

/**
 * Forge ownership: an organization acts only on the forge accounts (GitHub users and organizations,
 * "owners") it was granted. An owner on a host is granted to at most one organization. With a GitHub
 * App, connecting an installation grants its account; with a token, the operator grants owners one by
 * one (`mainline github grant`). See docs/github.md.
 */

/** What the guard needs: the database and whether (and how) the server reaches GitHub. */
export interface GrantContext {
  readonly db: Queryable;
  readonly config: Pick<Config, 'github'>;
}

/** The command an operator runs to grant `owner` to the organization, for the configured auth. */
export function grantCommand(config: Pick<Config, 'github'>, orgSlug: string, owner: string): string {
  return config.github?.auth.kind === 'app'
    ? `mainline github connect --org ${orgSlug} --installation <id of the GitHub App's installation on ${owner}>`
    : `mainline github grant --org ${orgSlug} --owner ${owner}`;
}

/**
 * The one guard in front of everything that reaches GitHub or returns what it said: a repository on
 * the GitHub host answers 403 unless the caller's organization holds its owner's grant. Without GitHub
 * configured nothing can reach GitHub, so a repository named github.com/x/y is only a label.
 */
export async function assertForgeGranted(
  ctx: GrantContext,
  caller: Caller,
  repo: { host: string; owner: string },
): Promise<void> {
  const github = ctx.config.github;
  if (github === undefined || repo.host.toLowerCase() !== github.host.toLowerCase()) return;
  const grant = await grants.findGrant(ctx.db, repo.host.toLowerCase(), repo.owner.toLowerCase());
  if (grant?.org_id === caller.orgId) return;
  // Whether another organization holds the owner is not said: that would tell who uses the server.
  throw new AppError(
    'FORBIDDEN',
    `Organization "${caller.orgSlug}" has not been granted the GitHub account "${repo.owner}" on ${github.host}, so it cannot act on or read ${repo.owner}'s repositories through this server. The server's operator grants it with: ${grantCommand(ctx.config, caller.orgSlug, repo.owner)}`,
  );
}

/** The organization of a slug, or 404 saying how organizations come to exist. */
export async function orgOf(db: Queryable, slug: string) {
  const org = await findOrgBySlug(db, slug.toLowerCase());
  if (org === undefined) {
    throw new AppError(
      'ORG_NOT_FOUND',
      `Organization "${slug}" does not exist; create it with: mainline token create --org ${slug.toLowerCase()}`,
    );
  }
  return org;
}

const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;

export interface GrantInput {
  readonly orgSlug: string;
  readonly host: string;
  readonly owner: string;
  /** The GitHub App installation the grant comes from (connect); absent for a token's grant. */
  readonly installationId?: number | undefined;
  readonly now: number;
}

/**
 * Grants an owner to an organization. Granting it again to the same organization is a no-op (a
 * connect records the installation); granting an owner another organization holds is a 409: the
 * operator revokes it there first, so a webhook never has two organizations to go to.
 */
export async function grantOwner(
  db: Queryable,
  input: GrantInput,
): Promise<{ created: boolean; grant: grants.ForgeGrantRow }> {
  if (!OWNER.test(input.owner)) {
    throw new AppError(
      'VALIDATION_FAILED',
      `"${input.owner}" is not a GitHub account name (letters, digits and hyphens, up to 39 characters)`,
    );
  }
  const org = await orgOf(db, input.orgSlug);
  const row: grants.ForgeGrantRow = {
    host_key: input.host.toLowerCase(),
    owner_key: input.owner.toLowerCase(),
    owner: input.owner,
    org_id: org.id,
    installation_id: input.installationId ?? null,
    created_at: input.now,
  };
  const created = await grants.insertGrantIfAbsent(db, row);
  const held = await grants.findGrant(db, row.host_key, row.owner_key);
  if (held === undefined || held.org_id !== org.id) {
    const other = held === undefined ? undefined : (await grants.listGrants(db, held.org_id)).at(0)?.org_slug;
    if (held === undefined && input.installationId !== undefined) {
      throw new AppError(
        'CONFLICT',
        `GitHub App installation ${input.installationId} is already connected to another account's grant; revoke that grant first (mainline github list)`,
      );
    }
    throw new AppError(
      'CONFLICT',
      `The GitHub account "${input.owner}" on ${input.host} is granted to organization "${other ?? '?'}"; an account belongs to one organization. Revoke it there first: mainline github revoke --org ${other ?? '<slug>'} --owner ${input.owner}`,
    );
  }
  if (!created && input.installationId !== undefined && held.installation_id !== input.installationId) {
    await grants.setGrantInstallation(db, row.host_key, row.owner_key, input.installationId);
    return { created, grant: { ...held, installation_id: input.installationId } };
  }
  return { created, grant: held };
}

/**
 * Connects a GitHub App installation to an organization: the App is asked which account the
 * installation is on (`account`), and that account is granted to the organization with the
 * installation recorded, so its deliveries are routed there.
 */
export async function connectInstallation(
  db: Queryable,
  account: (installationId: number) => Promise<string | null>,
  input: { orgSlug: string; host: string; installationId: number; now: number },
): Promise<{ created: boolean; grant: grants.ForgeGrantRow }> {
  const owner = await account(input.installationId);
  if (owner === null) {
    throw new AppError(
      'BAD_REQUEST',
      `The GitHub App has no installation ${input.installationId}; the id is in the installation's settings URL (…/settings/installations/<id>)`,
    );
  }
  return grantOwner(db, { ...input, owner });
}

/** Takes an owner's grant from an organization; 404 when it did not hold it. */
export async function revokeOwner(
  db: Queryable,
  input: { orgSlug: string; host: string; owner: string },
): Promise<void> {
  const org = await orgOf(db, input.orgSlug);
  if (!(await grants.deleteGrant(db, org.id, input.host.toLowerCase(), input.owner.toLowerCase()))) {
    throw new AppError(
      'BAD_REQUEST',
      `Organization "${org.slug}" holds no grant of "${input.owner}" on ${input.host} (see mainline github list)`,
    );
  }
}

/** Every grant (or one organization's), for `mainline github list`. */
export async function listForgeGrants(db: Queryable, orgSlug?: string) {
  const orgId = orgSlug === undefined ? undefined : (await orgOf(db, orgSlug)).id;
  return grants.listGrants(db, orgId);
}

/** The organization a GitHub delivery is for: by the App installation it names, else by its owner's grant. */
export async function deliveryOrg(
  db: Queryable,
  host: string,
  owner: string,
  installationId: number | undefined,
): Promise<string | undefined> {
  if (installationId !== undefined) {
    const bound = await grants.findGrantByInstallation(db, installationId);
    // An installation reaches only its own account's repositories.
    if (bound !== undefined && bound.owner_key === owner.toLowerCase()) return bound.org_id;
    if (bound !== undefined) return undefined;
  }
  const grant = await grants.findGrant(db, host.toLowerCase(), owner.toLowerCase());
  return grant?.org_id;
}
