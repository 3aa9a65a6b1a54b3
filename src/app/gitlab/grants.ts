import type { Queryable } from '../../db/bulk.ts';
import { AppError } from '../../domain/errors.ts';
import * as grants from '../../store/forge/grants.ts';
import { orgOf } from '../forge-grants.ts';

/** A GitLab namespace path: a user, a group or a subgroup (`group/sub`). */
const NAMESPACE = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_][A-Za-z0-9_.-]*){0,19}$/;

/**
 * Grants a GitLab namespace on a host to an organization: the organization may act on the projects
 * directly in that namespace (a subgroup is granted on its own), and their webhooks go to it alone.
 * A namespace belongs to one organization: granting one that another holds is a 409.
 */
export async function grantNamespace(
  db: Queryable,
  input: { orgSlug: string; host: string; namespace: string; now: number },
): Promise<{ created: boolean }> {
  const namespace = input.namespace.replace(/^\/+|\/+$/g, '');
  if (!NAMESPACE.test(namespace) || namespace.length > 255 || namespace.includes('..')) {
    throw new AppError(
      'VALIDATION_FAILED',
      `"${input.namespace}" is not a GitLab namespace path (a user or group, e.g. acme or acme/backend)`,
    );
  }
  const org = await orgOf(db, input.orgSlug);
  const row: grants.ForgeGrantRow = {
    host_key: input.host.toLowerCase(),
    owner_key: namespace.toLowerCase(),
    owner: namespace,
    org_id: org.id,
    installation_id: null,
    created_at: input.now,
  };
  const created = await grants.insertGrantIfAbsent(db, row);
  const held = await grants.findGrant(db, row.host_key, row.owner_key);
  if (held === undefined || held.org_id !== org.id) {
    throw new AppError(
      'CONFLICT',
      `The GitLab namespace "${namespace}" on ${input.host} is granted to another organization; a namespace belongs to one organization (revoke it there first: mainline gitlab revoke)`,
    );
  }
  return { created };
}

export async function revokeNamespace(
  db: Queryable,
  input: { orgSlug: string; host: string; namespace: string },
): Promise<void> {
  const org = await orgOf(db, input.orgSlug);
  const key = input.namespace.replace(/^\/+|\/+$/g, '').toLowerCase();
  if (!(await grants.deleteGrant(db, org.id, input.host.toLowerCase(), key))) {
    throw new AppError(
      'BAD_REQUEST',
      `Organization "${org.slug}" holds no grant of "${input.namespace}" on ${input.host} (see mainline gitlab list)`,
    );
  }
}

/** The grants on the GitLab host (optionally of one organization). */
export async function listNamespaceGrants(db: Queryable, host: string, orgSlug?: string) {
  const orgId = orgSlug === undefined ? undefined : (await orgOf(db, orgSlug)).id;
  return (await grants.listGrants(db, orgId)).filter((g) => g.host_key === host.toLowerCase());
}
