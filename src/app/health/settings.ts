import type { Queryable } from '../../db/bulk.ts';
import {
  type DetectionPolicy,
  newRepositoryPolicy,
  type QuarantineSettings,
} from '../../domain/health/index.ts';
import { findRepoSettings } from '../../store/tenancy/settings.ts';
import type { AppContext, Caller } from '../context.ts';
import { checkOrgSlug, findRepository, type RepoRef, repoKey } from '../repositories.ts';
import { type SettingsRecord, settingsRecord } from './settings-api.ts';

/** A repository's test-health settings, with defaults for a repository that never changed them. */
export interface HealthSettings {
  readonly quarantine: QuarantineSettings;
  readonly policy: DetectionPolicy;
  readonly ticketUrlTemplate: string | null;
}

/**
 * Defaults: quarantining on and flaky tests auto-quarantined (that is what the service is for; a
 * repository turns either off through update-repository-settings), and the detection policy of a
 * new repository (pass-on-retry on, 7-day recovery, all branches; the default broken-test monitor).
 * Every repository that existed before that monitor became a default has a settings row (migration
 * 0019), so a repository without one is new.
 */
export function defaultHealthSettings(): HealthSettings {
  return {
    quarantine: { quarantiningEnabled: true, autoQuarantineFlaky: true },
    policy: newRepositoryPolicy(),
    ticketUrlTemplate: null,
  };
}

export async function loadHealthSettings(db: Queryable, repoId: string): Promise<HealthSettings> {
  const row = await findRepoSettings(db, repoId);
  if (row === undefined) return defaultHealthSettings();
  return {
    quarantine: {
      quarantiningEnabled: row.quarantining_enabled === 1,
      autoQuarantineFlaky: row.auto_quarantine_flaky === 1,
    },
    policy: JSON.parse(row.policy) as DetectionPolicy,
    ticketUrlTemplate: row.ticket_url_template,
  };
}

/**
 * get-repository-settings' answer as JSON bytes (`serialize` is the route's), kept while the database
 * is unchanged (UnchangedReads, app/caches.ts): on SQLite it is made again only once something was
 * committed since, by any connection or process, so a settings change anywhere is in the next answer;
 * PostgreSQL has no settings version to check, so every call reads the settings row there (one
 * statement; the repository comes from its cache). A missing repository throws and is never kept.
 */
export function repositorySettingsJson(
  ctx: AppContext,
  caller: Caller,
  body: { repo: RepoRef; org_url_slug?: string | undefined },
  serialize: (answer: { settings: SettingsRecord }) => string,
): Promise<Buffer> {
  checkOrgSlug(caller, body.org_url_slug);
  const key = repoKey(body.repo);
  return ctx.caches.answers.repositorySettings.get(
    ctx.db,
    JSON.stringify([caller.orgId, key.hostKey, key.ownerKey, key.nameKey]),
    async () => {
      const repository = await findRepository(ctx.db, caller, body.repo);
      const settings = await loadHealthSettings(ctx.db, repository.id);
      return Buffer.from(serialize({ settings: settingsRecord(settings) }));
    },
  );
}
