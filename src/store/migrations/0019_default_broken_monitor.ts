import { type Kysely, sql } from 'kysely';

/**
 * New repositories start with a broken-test monitor (domain/health/policy.ts `newRepositoryPolicy`),
 * which applies to every repository without a `repo_settings` row. So that the repositories that
 * exist now keep detecting exactly as before, each of them without a row gets one holding the
 * settings it had: quarantining on, flaky tests auto-quarantined, pass-on-retry alone (all branches,
 * 7 recovery days), no ticket link. Those are the values of the defaults before this migration,
 * written out here (a migration does not import live code).
 */
const PREVIOUS_DEFAULT_POLICY = JSON.stringify({
  passOnRetry: { enabled: true, recoveryDays: 7, branches: ['*'] },
  failureRateMonitors: [],
  failureCountMonitors: [],
});

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`insert into repo_settings
      (repo_id, quarantining_enabled, auto_quarantine_flaky, policy, ticket_url_template, updated_at)
    select r.id, 1, 1, ${PREVIOUS_DEFAULT_POLICY}, null, ${Date.now()}
    from repositories r
    where not exists (select 1 from repo_settings s where s.repo_id = r.id)`.execute(db);
}

/** The rows written are indistinguishable from settings saved through the API, so they stay. */
export async function down(_db: Kysely<unknown>): Promise<void> {}
