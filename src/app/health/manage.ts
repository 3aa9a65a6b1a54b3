import type { Queryable } from '../../db/bulk.ts';
import { AppError } from '../../domain/errors.ts';
import { type ManualFlag, validatePolicy } from '../../domain/health/index.ts';
import { upsertRepoSettings } from '../../store/tenancy/settings.ts';
import { setManualFlag, setQuarantineOverride, setTicket } from '../../store/tests/case-writes.ts';
import { listActiveTestIds, listQuarantineCandidates } from '../../store/tests/cases.ts';
import { insertEvents, listEvents } from '../../store/tests/events.ts';
import { inTransaction } from '../../store/transaction.ts';
import { lockRepositoryHealth } from '../../store/uploads/results.ts';
import type { AppContext, Caller } from '../context.ts';
import { checkOrgSlug, findRepository, type RepoRef, type Repository, repoKey } from '../repositories.ts';
import { testHtmlUrl } from '../urls.ts';
import { detailedRecord, findTest } from './read.ts';
import { recomputeTests } from './recompute.ts';
import { type HealthSettings, loadHealthSettings } from './settings.ts';
import {
  applySettingsPatch,
  policyProblemDetail,
  type SettingsPatch,
  settingsRecord,
} from './settings-api.ts';

interface Scoped {
  repo: RepoRef;
  org_url_slug: string;
}

async function repositoryOf(ctx: AppContext, caller: Caller, body: Scoped): Promise<Repository> {
  checkOrgSlug(caller, body.org_url_slug);
  return findRepository(ctx.db, caller, body.repo);
}

const who = (caller: Caller) => `${caller.tokenName} (token ${caller.tokenId.slice(0, 8)})`;

/** Recomputes one test after a manual change, in the caller's transaction, and returns its record. */
async function recomputeOne(
  ctx: AppContext,
  trx: Queryable,
  repository: Repository,
  testId: string,
  by: string,
) {
  const settings = await loadHealthSettings(trx, repository.id);
  await recomputeTests(trx, repository.id, [testId], settings, {
    now: ctx.now(),
    commitShas: [],
    by,
    passBlobs: ctx.caches.passBlobs,
  });
}

/** Links an external ticket; its link comes from the repository's ticket_url_template when set. */
export async function linkTicket(
  ctx: AppContext,
  caller: Caller,
  body: { repo: RepoRef; test_case_id: string; external_ticket_id: string },
): Promise<void> {
  const repository = await findRepository(ctx.db, caller, body.repo);
  const test = await findTest(ctx, repository, body.test_case_id.toLowerCase());
  const settings = await loadHealthSettings(ctx.db, repository.id);
  const id = body.external_ticket_id.trim();
  const url = /^https?:\/\//i.test(id)
    ? id
    : settings.ticketUrlTemplate !== null
      ? settings.ticketUrlTemplate.replaceAll('{id}', encodeURIComponent(id))
      : `${testHtmlUrl(ctx.config.publicUrl, caller.orgSlug, repository, test.id)}#ticket=${encodeURIComponent(id)}`;
  await inTransaction(ctx.db, async (trx) => {
    await setTicket(trx, repository.id, test.id, id, url);
    await insertEvents(trx, [
      {
        test_case_id: test.id,
        at: ctx.now(),
        kind: 'ticket',
        data: JSON.stringify({ ticket: id, url, by: who(caller) }),
      },
    ]);
  });
}

export type OverrideSetting = 'ALWAYS_QUARANTINE' | 'NEVER_QUARANTINE' | 'AUTO';

/** Sets a test's quarantine override (with history) and applies it at once. */
export async function overrideQuarantine(
  ctx: AppContext,
  caller: Caller,
  body: Scoped & { test_id: string; setting: OverrideSetting; reason?: string | undefined },
) {
  const repository = await repositoryOf(ctx, caller, body);
  const test = await findTest(ctx, repository, body.test_id.toLowerCase());
  await inTransaction(ctx.db, async (trx) => {
    await lockRepositoryHealth(trx, repository.id);
    await setQuarantineOverride(trx, repository.id, test.id, body.setting);
    const data = {
      from: test.quarantine_override,
      to: body.setting,
      reason: body.reason ?? null,
      by: who(caller),
    };
    await insertEvents(trx, [
      { test_case_id: test.id, at: ctx.now(), kind: 'quarantine_override', data: JSON.stringify(data) },
    ]);
    await recomputeOne(ctx, trx, repository, test.id, who(caller));
  });
  return reread(ctx, caller, repository, test.id);
}

/** Flags a test as flaky by hand (forcing FLAKY) or removes the flag (back to what the monitors say). */
export async function flagTest(
  ctx: AppContext,
  caller: Caller,
  body: Scoped & { test_id: string; flagged: boolean; reason?: string | undefined },
) {
  const repository = await repositoryOf(ctx, caller, body);
  const test = await findTest(ctx, repository, body.test_id.toLowerCase());
  const flag: ManualFlag = {
    flagged: body.flagged,
    by: caller.tokenName,
    at: ctx.now(),
    ...(body.reason ? { reason: body.reason } : {}),
  };
  await inTransaction(ctx.db, async (trx) => {
    await lockRepositoryHealth(trx, repository.id);
    await setManualFlag(trx, repository.id, test.id, JSON.stringify(flag));
    await insertEvents(trx, [
      {
        test_case_id: test.id,
        at: flag.at,
        kind: 'manual_flag',
        data: JSON.stringify({ ...flag, by: who(caller) }),
      },
    ]);
    await recomputeOne(ctx, trx, repository, test.id, who(caller));
  });
  return reread(ctx, caller, repository, test.id);
}

async function reread(ctx: AppContext, caller: Caller, repository: Repository, testId: string) {
  const row = await findTest(ctx, repository, testId);
  return {
    test: await detailedRecord(ctx, row, {
      publicUrl: ctx.config.publicUrl,
      orgSlug: caller.orgSlug,
      repository,
    }),
  };
}

/** A test's history: status transitions, quarantine changes, overrides, flags, tickets; newest first. */
export async function testHistory(ctx: AppContext, caller: Caller, body: Scoped & { test_id: string }) {
  const repository = await repositoryOf(ctx, caller, body);
  const test = await findTest(ctx, repository, body.test_id.toLowerCase());
  const rows = await listEvents(ctx.db, test.id, undefined, 500);
  return {
    events: rows.map((r) => ({
      ...(JSON.parse(r.data) as object),
      at: new Date(r.at).toISOString(),
      kind: r.kind,
    })),
  };
}

export async function getSettings(ctx: AppContext, caller: Caller, body: Scoped) {
  const repository = await repositoryOf(ctx, caller, body);
  return { settings: settingsRecord(await loadHealthSettings(ctx.db, repository.id)) };
}

/**
 * get-repository-settings' answer (getSettings) as JSON bytes (`serialize` is the route's), kept while
 * the database is unchanged (UnchangedReads, app/caches.ts): on SQLite it is made again only once
 * something was committed since, by any connection or process, so a settings change anywhere is in the
 * next answer; PostgreSQL has no settings version to check, so every call reads the settings row there
 * (one statement; the repository comes from its cache). A missing repository throws and is never kept.
 */
export function getSettingsJson(
  ctx: AppContext,
  caller: Caller,
  body: Scoped,
  serialize: (answer: Awaited<ReturnType<typeof getSettings>>) => string,
): Promise<Buffer> {
  checkOrgSlug(caller, body.org_url_slug);
  const key = repoKey(body.repo);
  return ctx.caches.answers.repositorySettings.get(
    ctx.db,
    JSON.stringify([caller.orgId, key.hostKey, key.ownerKey, key.nameKey]),
    async () => Buffer.from(serialize(await getSettings(ctx, caller, body))),
  );
}

/** Changes settings, then re-applies quarantine to every test it could affect and re-evaluates active monitors. */
export async function updateSettings(
  ctx: AppContext,
  caller: Caller,
  body: Scoped & { settings: SettingsPatch },
) {
  const repository = await repositoryOf(ctx, caller, body);
  const current = await loadHealthSettings(ctx.db, repository.id);
  const next = applySettingsPatch(current, body.settings);
  const problems = validatePolicy(next.policy, { retentionDays: ctx.config.retentionDays });
  if (problems.length > 0) {
    const details = problems.map(policyProblemDetail);
    throw new AppError(
      'VALIDATION_FAILED',
      `Invalid settings: ${details
        .map((d) => d.message)
        .slice(0, 3)
        .join('; ')}`,
      { details },
    );
  }
  await inTransaction(ctx.db, async (trx) => {
    await lockRepositoryHealth(trx, repository.id);
    await saveSettings(trx, repository.id, next, ctx.now());
    const ids = new Set([
      ...(await listQuarantineCandidates(trx, repository.id)).map((r) => r.id),
      ...(await listActiveTestIds(trx, repository.id)).map((r) => r.id),
    ]);
    await recomputeTests(trx, repository.id, [...ids], next, {
      now: ctx.now(),
      commitShas: [],
      by: who(caller),
      passBlobs: ctx.caches.passBlobs,
    });
  });
  return { settings: settingsRecord(next) };
}

async function saveSettings(db: Queryable, repoId: string, s: HealthSettings, now: number): Promise<void> {
  await upsertRepoSettings(db, {
    repo_id: repoId,
    quarantining_enabled: s.quarantine.quarantiningEnabled ? 1 : 0,
    auto_quarantine_flaky: s.quarantine.autoQuarantineFlaky ? 1 : 0,
    policy: JSON.stringify(s.policy),
    ticket_url_template: s.ticketUrlTemplate,
    updated_at: now,
  });
}
