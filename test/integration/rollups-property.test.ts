// The test-health rollups (store/uploads/rollups.ts, migration 0018) agree with the raw history: after random
// uploads (passes, failures whose texts differ in numbers, skips, retries, attempt times across
// 30 days and hours), retention passes under a moving clock, quarantine changes and folds, the rows of
// test_failure_hours equal what a recomputation from test_results gives, and those of test_run_hours
// what the results and upload_passes blobs of the uploads not listed as pending give (their counts
// are folded in later, migration 0035); get-test-details' rates are the counts of every upload, the
// pending ones folded first; migration 0035's down adds the pending uploads' counts.
import fc from 'fast-check';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { runHealthSweep } from '../../src/app/health/sweep.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { foldPendingRuns, foldPendingUploads } from '../../src/store/uploads/duration-writes.ts';
import { decodeDetails, decodeOrdinals } from '../../src/store/uploads/pass-codec.ts';
import { rebuildRollups } from '../../src/store/uploads/rollups-write.ts';
import { REPO } from '../support/app.ts';
import { migratorOf } from '../support/migrations.ts';
import { storedTestsOf } from '../support/reads.ts';
import { multipart } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let clock = Date.UTC(2026, 2, 1, 9, 17, 23);
// No idle fold: what is listed is compared between uploads (ingest-idle-fold.test.ts tests it).
const t = useTestApp({
  env: { MAINLINE_RETENTION_DAYS: '30', MAINLINE_FOLD_IDLE_MS: '0' },
  now: () => clock,
});

const db = () => t.db.database.db;

/** The rollups as stored, sorted, as strings. */
async function stored(): Promise<{ runs: string[]; failures: string[] }> {
  const runs = await db().selectFrom('test_run_hours').selectAll().execute();
  const failures = await db().selectFrom('test_failure_hours').selectAll().execute();
  return {
    runs: runs
      .map(
        (r) =>
          `${r.repo_id}|${Number(r.hour)}|${Number(r.ordinal)}|${Number(r.passed)}|${Number(r.failed)}|${Number(r.failed_quarantined)}|${Number(r.skipped)}`,
      )
      .sort(),
    failures: failures
      .map(
        (r) =>
          `${r.repo_id}|${Number(r.ordinal)}|${Number(r.hour)}|${r.fingerprint}|${Number(r.failures)}|${Number(r.last_at)}|${r.summary}`,
      )
      .sort(),
  };
}

/**
 * The same, recomputed from the raw rows: results by SQL, passes by decoding every upload's blobs;
 * the runs of `runsOf: 'folded'` only from uploads not listed with runs_pending.
 */
async function recomputed(runsOf: 'all' | 'folded'): Promise<{ runs: string[]; failures: string[] }> {
  const pending = new Set(
    runsOf === 'all'
      ? []
      : (
          await db()
            .selectFrom('duration_means_pending')
            .select('upload_id')
            .where('runs_pending', '=', 1)
            .execute()
        ).map((r) => r.upload_id),
  );
  const runs = new Map<string, number[]>();
  const add = (repo: string, at: number, ordinal: number, k: number) => {
    const key = `${repo}|${Math.floor(at / HOUR)}|${ordinal}`;
    let sums = runs.get(key);
    if (sums === undefined) {
      sums = [0, 0, 0, 0];
      runs.set(key, sums);
    }
    sums[k] = (sums[k] as number) + 1;
  };
  const results = await db()
    .selectFrom('test_results as r')
    .innerJoin('test_cases as c', 'c.id', 'r.test_case_id')
    .select(['r.repo_id', 'r.upload_id', 'r.at', 'r.outcome', 'r.quarantined', 'c.ordinal'])
    .execute();
  for (const r of results) {
    if (pending.has(r.upload_id)) continue;
    if (r.outcome === 'failed') {
      add(r.repo_id, Number(r.at), Number(r.ordinal), 1);
      if (r.quarantined === 1) add(r.repo_id, Number(r.at), Number(r.ordinal), 2);
    } else add(r.repo_id, Number(r.at), Number(r.ordinal), 3);
  }
  for (const u of await db().selectFrom('upload_passes').selectAll().execute()) {
    if (pending.has(u.upload_id)) continue;
    const set = decodeOrdinals(u.ordinals, Number(u.at_min), Number(u.at_max));
    const details = decodeDetails(u.details, Number(u.count));
    set.ordinals.forEach((o, i) => {
      add(u.repo_id, Number(u.at_min) + (details.atOffsets[i] as number), o, 0);
    });
  }
  const { rows } = await sql<{
    repo_id: string;
    ordinal: number;
    hour: number;
    fingerprint: string;
    failures: number;
    last_at: number;
    summary: string | null;
  }>`select r.repo_id, c.ordinal, cast(r.at / 3600000 as integer) as hour,
      coalesce(r.failure_fingerprint, '') as fingerprint, count(*) as failures, max(r.at) as last_at,
      min(r.failure_summary) as summary
    from test_results r join test_cases c on c.id = r.test_case_id where r.outcome = 'failed'
    group by r.repo_id, c.ordinal, cast(r.at / 3600000 as integer), coalesce(r.failure_fingerprint, '')`.execute(
    db(),
  );
  return {
    runs: [...runs].map(([key, [p, f, q, s]]) => `${key}|${p}|${f}|${q}|${s}`).sort(),
    failures: rows
      .map(
        (r) =>
          `${r.repo_id}|${Number(r.ordinal)}|${Number(r.hour)}|${r.fingerprint}|${Number(r.failures)}|${Number(r.last_at)}|${r.summary}`,
      )
      .sort(),
  };
}

const NAMES = ['alpha', 'beta', 'gamma', 'delta'];
const TEXTS = ['boom at line', 'timeout after', 'expected 0x'];

type Attempt = { outcome: 'pass' | 'fail' | 'skip'; text: number; n: number; offsetMin: number };
type Step =
  | { kind: 'upload'; cases: { name: number; attempts: Attempt[] }[] }
  | { kind: 'time'; hours: number }
  | { kind: 'retention'; days: number }
  | { kind: 'fold'; runsOnly: boolean }
  | { kind: 'quarantine'; name: number; setting: 'ALWAYS_QUARANTINE' | 'NEVER_QUARANTINE' | 'AUTO' };

const attempt = fc.record({
  outcome: fc.constantFrom('pass', 'fail', 'fail', 'skip') as fc.Arbitrary<Attempt['outcome']>,
  text: fc.nat(TEXTS.length - 1),
  n: fc.nat(99),
  // Minutes from the upload's time: up to 32 days before (older ones are replaced by the upload's
  // time) and 90 minutes after (beyond an hour, too).
  offsetMin: fc.integer({ min: -32 * 24 * 60, max: 90 }),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('upload' as const),
      cases: fc.array(
        fc.record({
          name: fc.nat(NAMES.length - 1),
          attempts: fc.array(attempt, { minLength: 1, maxLength: 3 }),
        }),
        { minLength: 1, maxLength: 4 },
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('time' as const), hours: fc.integer({ min: 1, max: 60 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('retention' as const), days: fc.integer({ min: 0, max: 40 }) }),
  },
  // Everything listed, or (what reads of the hour rows and a quiet repository's idle fold do) the
  // counts alone, the uploads left listed for the means.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fold' as const), runsOnly: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('quarantine' as const),
      name: fc.nat(NAMES.length - 1),
      setting: fc.constantFrom('ALWAYS_QUARANTINE', 'NEVER_QUARANTINE', 'AUTO') as fc.Arbitrary<
        'ALWAYS_QUARANTINE' | 'NEVER_QUARANTINE' | 'AUTO'
      >,
    }),
  },
);

function report(cases: { name: number; attempts: Attempt[] }[]): string {
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  const body = cases
    .flatMap((c) =>
      c.attempts.map((a) => {
        const attrs = `name="${NAMES[c.name]}" classname="pkg.Prop" timestamp="${iso(clock + a.offsetMin * 60_000)}" time="0.01"`;
        if (a.outcome === 'pass') return `<testcase ${attrs}/>`;
        if (a.outcome === 'skip') return `<testcase ${attrs}><skipped/></testcase>`;
        const text = `${TEXTS[a.text]} ${a.n}`;
        return `<testcase ${attrs}><failure message="${text}">${text}\n  at /src/f${a.n}.ts:${a.n}</failure></testcase>`;
      }),
    )
    .join('');
  return `<testsuites><testsuite name="prop">${body}</testsuite></testsuites>`;
}

let commit = 0;

type Repo = { host: string; owner: string; name: string };

/** What the steps did, so the test can tell it exercised each path. */
const seen = {
  failureRows: 0,
  pruned: 0,
  quarantined: 0,
  pendingRuns: 0,
  folded: 0,
  prunedPending: 0,
  prunedListedForMeans: 0,
};

/** Uploads listed with their counts not yet in test_run_hours. */
async function pendingRuns(): Promise<number> {
  const rows = await db()
    .selectFrom('duration_means_pending')
    .select('upload_id')
    .where('runs_pending', '=', 1)
    .execute();
  return rows.length;
}

async function run(s: Step, repo: Repo, ids: Map<string, string>): Promise<void> {
  if (s.kind === 'time') {
    clock += s.hours * HOUR;
  } else if (s.kind === 'fold') {
    for (const { id } of await db().selectFrom('repositories').select('id').execute())
      seen.folded += await (s.runsOnly ? foldPendingRuns(db(), id) : foldPendingUploads(db(), id));
  } else if (s.kind === 'retention') {
    clock += s.days * DAY;
    const listed = await pendingRuns();
    const forMeans =
      (await db().selectFrom('duration_means_pending').select('upload_id').execute()).length - listed;
    seen.pruned += (
      await runHealthSweep({ db: db(), config: t.config, now: () => clock, caches: t.caches })
    ).prunedUploads;
    if (listed > 0) seen.prunedPending++;
    if (forMeans > 0) seen.prunedListedForMeans++;
  } else if (s.kind === 'quarantine') {
    const id = ids.get(NAMES[s.name] as string);
    if (id === undefined) return;
    const res = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { repo, org_url_slug: 'acme', test_id: id, setting: s.setting, reason: 'property test' },
      t.orgToken,
    );
    expect(res.statusCode, res.body).toBe(200);
    if (res.json().test.quarantined === true) seen.quarantined++;
  } else {
    commit++;
    const meta = { repo, org_url_slug: 'acme', branch: 'main', commit_sha: `c0ffee${commit}` };
    const body = multipart(meta, [{ name: 'r.xml', content: report(s.cases) }]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/test-results/upload',
      headers: { 'x-api-token': t.orgToken, 'content-type': body.contentType },
      payload: body.payload,
    });
    expect(res.statusCode, res.body).toBe(200);
    // The background fold started once 8 uploads are listed ends before the tables are compared.
    await t.caches.meansFolds.settled();
    for (const r of await storedTestsOf(t, repo)) ids.set(r.name, r.id);
  }
}

describe('test-health rollups', () => {
  let runs = 0;
  it('equal a recomputation from the raw rows after uploads, retention passes and quarantine changes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 10 }), async (steps) => {
        runs++;
        const repo: Repo = { ...REPO, name: `prop${runs}` };
        const ids = new Map<string, string>();
        for (const s of steps) {
          await run(s, repo, ids);
          const now = await stored();
          expect(now).toEqual(await recomputed('folded'));
          seen.failureRows += now.failures.length;
          seen.pendingRuns += await pendingRuns();
        }
        // get-test-details answers from the rollups: its rates are the counts of the whole hours
        // from the one holding the window's start.
        for (const [, id] of ids) {
          const res = await t.post(
            '/v1/flaky-tests/get-test-details',
            { repo, org_url_slug: 'acme', test_id: id },
            t.orgToken,
          );
          expect(res.statusCode, res.body).toBe(200);
          const { ordinal } = await db()
            .selectFrom('test_cases')
            .select('ordinal')
            .where('id', '=', id)
            .executeTakeFirstOrThrow();
          const rows = await db()
            .selectFrom('test_run_hours')
            .selectAll()
            .where('ordinal', '=', ordinal)
            .where('repo_id', '=', (qb) => qb.selectFrom('test_cases').select('repo_id').where('id', '=', id))
            .execute();
          const rate = (since: number) => {
            let ran = 0;
            let failed = 0;
            for (const r of rows)
              if (Number(r.hour) >= Math.floor(since / HOUR)) {
                ran += Number(r.passed) + Number(r.failed);
                failed += Number(r.failed);
              }
            return ran === 0 ? 0 : failed / ran;
          };
          expect(res.json().test.failure_rate_last_7d).toBe(rate(clock - 7 * DAY));
          expect(res.json().test.failure_rate_last_24h).toBe(rate(clock - DAY));
        }
        // The reads folded every upload of the repository: the hour rows hold them all.
        if (ids.size > 0) expect(await stored()).toEqual(await recomputed('all'));
      }),
      { numRuns: 60, seed: 20260301 },
    );
    expect(seen.failureRows).toBeGreaterThan(0);
    expect(seen.pruned).toBeGreaterThan(0);
    expect(seen.quarantined).toBeGreaterThan(0);
    expect(seen.pendingRuns).toBeGreaterThan(0);
    expect(seen.folded).toBeGreaterThan(0);
    expect(seen.prunedPending).toBeGreaterThan(0);
    expect(seen.prunedListedForMeans).toBeGreaterThan(0);
  }, 120_000);

  it('have the pending uploads counted in by migration 0035 going down, and fold the same after it', async () => {
    const repo: Repo = { ...REPO, name: 'pending-down' };
    const ids = new Map<string, string>();
    const pass: Attempt = { outcome: 'pass', text: 0, n: 1, offsetMin: -5 };
    const fail: Attempt = { outcome: 'fail', text: 1, n: 2, offsetMin: -70 };
    for (let k = 0; k < 3; k++)
      await run({ kind: 'upload', cases: [{ name: k, attempts: [pass, fail, pass] }] }, repo, ids);
    expect(await pendingRuns()).toBeGreaterThan(0);
    const all = await recomputed('all');
    expect(await stored()).not.toEqual(all);
    const migrator = migratorOf(db());
    expect((await migrator.migrateTo('0034_queue_run_heads')).error).toBeUndefined();
    expect(await stored()).toEqual(all);
    expect((await migrateToLatest(t.db.database)).applied).toContain('0035_run_hours_pending');
    // Listed again as before 0035 (their counts in the hour rows): a fold adds only their durations.
    for (const { id } of await db().selectFrom('repositories').select('id').execute())
      await foldPendingUploads(db(), id);
    expect(await stored()).toEqual(all);
  });

  it('are rebuilt, and filled by migration 0018, from an existing database as ingestion left them', async () => {
    for (const { id } of await db().selectFrom('repositories').select('id').execute())
      await foldPendingUploads(db(), id);
    const before = await stored();
    expect(before).toEqual(await recomputed('all'));
    expect(before.runs.length).toBeGreaterThan(0);
    // rebuildRollups (the bench's seed) gives the same from the raw rows.
    for (const { id } of await db().selectFrom('repositories').select('id').execute())
      await rebuildRollups(db(), id);
    expect(await stored()).toEqual(before);
    const migrator = migratorOf(db());
    const down = await migrator.migrateTo('0017_queue_labels');
    expect(down.error).toBeUndefined();
    expect((await migrateToLatest(t.db.database)).applied).toContain('0018_test_rollups');
    expect(await stored()).toEqual(before);
  });
});
