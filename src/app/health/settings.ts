import type { Queryable } from '../../db/bulk.ts';
import {
  type DetectionPolicy,
  newRepositoryPolicy,
  type QuarantineSettings,
} from '../../domain/health/index.ts';
import { findRepoSettings } from '../../store/tenancy/settings.ts';

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
