// The dashboard's kept failing-tests windows (test_failing_windows, migration 0033, store/dashboard/
// failing.ts) agree with the raw history: after random uploads (failures across 8 days and an hour
// ahead), the clock moving by minutes, hours or onto an exact hour, periodic passes (which move the
// windows, and build those not kept), retention passes (as they would run later, taking out uploads
// inside the windows) and a repository's windows dropped (as when its rollups are rebuilt or were kept
// by nothing: its next upload must not keep them empty), every kept window holds, for its hours, each test's failures as a
// recomputation from test_results gives, and its count; and the page, read through the dashboard
// at the clock's time, shows what the raw results give for the window's hours.
import fc from 'fast-check';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { runHealthSweep } from '../../src/app/health/sweep.ts';
import { applyRetention } from '../../src/app/retention.ts';
import { failingWindowAt } from '../../src/store/dashboard/failing.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { REPO } from '../support/app.ts';
import { getPage, signIn, tableRows } from '../support/dashboard.ts';
import { MIGRATION_NAMES, migratorOf } from '../support/migrations.ts';
import { sweepContext } from '../support/sweep.ts';
import { upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let clock = Date.UTC(2026, 4, 1, 9, 17, 23);
const t = useTestApp({ env: { MAINLINE_RETENTION_DAYS: '30' }, now: () => clock });
const db = () => t.db.database.db;

/** Each test's failed results per hour, from the raw rows. */
async function rawFailures(): Promise<
  { repo: string; ordinal: number; name: string; id: string; hour: number; n: number }[]
> {
  const { rows } = await sql<{
    repo_id: string;
    ordinal: number;
    name: string;
    id: string;
    hour: number;
    n: number;
  }>`select r.repo_id, c.ordinal, c.name, c.id, cast(r.at / 3600000 as integer) as hour, count(*) as n
    from test_results r join test_cases c on c.id = r.test_case_id where r.outcome = 'failed'
    group by r.repo_id, c.ordinal, c.name, c.id, cast(r.at / 3600000 as integer)`.execute(db());
  return rows.map((r) => ({
    repo: r.repo_id,
    ordinal: Number(r.ordinal),
    name: r.name,
    id: r.id,
    hour: Number(r.hour),
    n: Number(r.n),
  }));
}

/** A window's tests from the raw rows: `ordinal|failures|name|id`, sorted. */
function windowOf(
  raw: Awaited<ReturnType<typeof rawFailures>>,
  repo: string,
  lo: number,
  hi: number,
): string[] {
  const sums = new Map<number, { n: number; name: string; id: string }>();
  for (const r of raw) {
    if (r.repo !== repo || r.hour < lo || r.hour > hi) continue;
    const s = sums.get(r.ordinal);
    if (s === undefined) sums.set(r.ordinal, { n: r.n, name: r.name, id: r.id });
    else s.n += r.n;
  }
  return [...sums].map(([o, s]) => `${o}|${s.n}|${s.name}|${s.id}`).sort();
}

/** The id of the repository `name` (of REPO's owner), if an upload made it. */
async function repoIdOf(name: string): Promise<string | undefined> {
  const { rows } = await sql<{ id: string }>`select id from repositories
    where owner = ${REPO.owner} and name = ${name}`.execute(db());
  return rows[0]?.id;
}

/**
 * Every kept window (of every repository so far: retention passes reach earlier runs' too) as
 * stored and as the raw rows give it for its hours.
 */
async function keptAndRaw(): Promise<{ kept: string[]; raw: string[] }> {
  const states = await sql<{ repo_id: string; hours: number; lo: number; hi: number; tests: number }>`select
    repo_id, hours, lo, hi, tests from failing_window_state`.execute(db());
  const rows = await sql<{
    repo_id: string;
    hours: number;
    ordinal: number;
    failures: number;
    name: string;
    test_id: string;
  }>`select repo_id, hours, ordinal, failures, name, test_id from test_failing_windows`.execute(db());
  const raw = await rawFailures();
  const kept: string[] = [];
  const expected: string[] = [];
  for (const s of states.rows) {
    const key = `${s.repo_id}|${Number(s.hours)}`;
    const mine = rows.rows
      .filter((r) => `${r.repo_id}|${Number(r.hours)}` === key)
      .map((r) => `${Number(r.ordinal)}|${Number(r.failures)}|${r.name}|${r.test_id}`)
      .sort();
    kept.push(`${key} tests=${Number(s.tests)}`, ...mine.map((m) => `${key}|${m}`));
    const want = windowOf(raw, s.repo_id, Number(s.lo), Number(s.hi));
    expected.push(`${key} tests=${want.length}`, ...want.map((m) => `${key}|${m}`));
  }
  // No rows outside a kept window.
  expect(rows.rows.length).toBe(kept.length - states.rows.length);
  return { kept, raw: expected };
}

const NAMES = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];

type Attempt = { fail: boolean; offsetMin: number };
type Step =
  | { kind: 'upload'; cases: { name: number; attempts: Attempt[] }[] }
  | { kind: 'minutes'; n: number }
  | { kind: 'exact-hour' }
  | { kind: 'sweep' }
  | { kind: 'retention'; hoursBack: number }
  | { kind: 'forget' }
  | { kind: 'read'; window: '24h' | '7d' };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('upload' as const),
      cases: fc.array(
        fc.record({
          name: fc.nat(NAMES.length - 1),
          attempts: fc.array(
            fc.record({
              fail: fc.boolean(),
              // Up to 8 days back (older than the 7-day window) and 90 minutes ahead (hours beyond
              // the window's last, until the clock reaches them).
              offsetMin: fc.integer({ min: -8 * 24 * 60, max: 90 }),
            }),
            { minLength: 1, maxLength: 3 },
          ),
        }),
        { minLength: 1, maxLength: 4 },
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('minutes' as const), n: fc.integer({ min: 1, max: 3000 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('exact-hour' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sweep' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('forget' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('retention' as const),
      hoursBack: fc.integer({ min: 0, max: 8 * 24 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      window: fc.constantFrom('24h', '7d') as fc.Arbitrary<'24h' | '7d'>,
    }),
  },
);

function report(cases: { name: number; attempts: Attempt[] }[]): string {
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  const body = cases
    .flatMap((c) =>
      c.attempts.map((a) => {
        const attrs = `name="${NAMES[c.name]}" classname="pkg.Win" timestamp="${iso(clock + a.offsetMin * 60_000)}" time="0.01"`;
        return a.fail
          ? `<testcase ${attrs}><failure message="boom">boom</failure></testcase>`
          : `<testcase ${attrs}/>`;
      }),
    )
    .join('');
  return `<testsuites><testsuite name="win">${body}</testsuite></testsuites>`;
}

let commit = 0;
/** What the steps did, so the test can tell it exercised each path. */
const seen = { kept: 0, reads: 0, moved: 0, pruned: 0, prunedKept: 0 };

async function run(s: Step, name: string): Promise<void> {
  const repo = { ...REPO, name };
  if (s.kind === 'minutes') clock += s.n * 60_000;
  else if (s.kind === 'exact-hour') clock = Math.ceil(clock / HOUR) * HOUR;
  else if (s.kind === 'sweep') {
    await runHealthSweep(sweepContext(t, () => clock));
  } else if (s.kind === 'forget') {
    const repoId = await repoIdOf(name);
    await sql`delete from test_failing_windows where repo_id = ${repoId ?? ''}`.execute(db());
    await sql`delete from failing_window_state where repo_id = ${repoId ?? ''}`.execute(db());
  } else if (s.kind === 'retention') {
    // Retention as it would run later, while the page's clock stays: the uploads created more than
    // `hoursBack` hours ago go, with their failures inside the windows.
    seen.pruned += (
      await applyRetention(
        sweepContext(t, () => clock),
        clock + 30 * DAY - s.hoursBack * HOUR,
      )
    ).uploads;
  } else if (s.kind === 'read') {
    const repoId = await repoIdOf(name);
    if (repoId === undefined) return; // no upload yet
    const cookie = await signIn(t, t.orgToken);
    const res = await getPage(t, `/acme/repos/github.com/acme/${name}/failing?window=${s.window}`, cookie);
    expect(res.statusCode, res.body).toBe(200);
    const { lo, hi } = failingWindowAt(s.window === '24h' ? 24 : 168, clock);
    const raw = await rawFailures();
    const want = windowOf(raw, repoId, lo, hi)
      .map((w) => w.split('|'))
      .map(([, n, testName, id]) => ({ n: Number(n), name: testName as string, id: id as string }))
      .sort((a, b) => b.n - a.n || (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1));
    const total = Number(/<p role="status">(\d+) tests? failed/.exec(res.body)?.[1]);
    expect(total).toBe(want.length);
    expect(tableRows(res.body).map((r) => [r[0], r[1]])).toEqual(
      want.map((w) => [`${w.name} pkg.Win`, String(w.n)]),
    );
    seen.reads++;
  } else {
    commit++;
    const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: report(s.cases) }], {
      repo,
      sha: `c0ffee${commit}`,
    });
    expect(res.statusCode, res.body).toBe(200);
  }
}

describe('the kept failing-tests windows', () => {
  let runs = 0;
  it('equal a recomputation from the raw results after uploads, hours passing, periodic and retention passes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 14 }), async (steps) => {
        runs++;
        const name = `win${runs}`;
        for (const s of steps) {
          const before = await keptAndRaw();
          await run(s, name);
          const now = await keptAndRaw();
          expect(now.kept).toEqual(now.raw);
          seen.kept += now.kept.length;
          const changed = JSON.stringify(before.kept) !== JSON.stringify(now.kept);
          if (changed && s.kind === 'retention') seen.prunedKept++;
          if (changed && (s.kind === 'sweep' || s.kind === 'read')) seen.moved++;
        }
      }),
      { numRuns: 40, seed: 20260501 },
    );
    expect(seen.reads).toBeGreaterThan(0);
    expect(seen.moved).toBeGreaterThan(0);
    expect(seen.pruned).toBeGreaterThan(0);
    expect(seen.prunedKept).toBeGreaterThan(0);
    expect(seen.kept).toBeGreaterThan(0);
  }, 300_000);

  it('are filled by migration 0033 from the failure rollups, and a page read moves them onto its hours', async () => {
    // Uploads at the real time (the migration keeps the hours of Date.now()), failures inside both
    // windows, inside the 7 days only, and older.
    clock = Date.now();
    const name = 'migrated';
    for (const offsetMin of [0, -120, -3 * 24 * 60, -8 * 24 * 60])
      await run(
        {
          kind: 'upload',
          cases: [
            { name: 0, attempts: [{ fail: true, offsetMin }] },
            { name: 1, attempts: [{ fail: offsetMin !== 0, offsetMin }] },
          ],
        },
        name,
      );
    const down = await migratorOf(db()).migrateTo(
      MIGRATION_NAMES[MIGRATION_NAMES.indexOf('0033_failing_windows') - 1] as string,
    );
    expect(down.error).toBeUndefined();
    expect((await migrateToLatest(t.db.database)).applied).toContain('0033_failing_windows');
    const filled = await keptAndRaw();
    expect(filled.kept).toEqual(filled.raw);
    const repoId = (await repoIdOf(name)) as string;
    expect(filled.kept.filter((k) => k.startsWith(`${repoId}|`))).toHaveLength(2 + 2 + 2);
    // Read 40 days later: the windows hold no hour of the ones kept, and are grouped afresh.
    clock += 40 * DAY;
    await run({ kind: 'read', window: '7d' }, name);
    const moved = await keptAndRaw();
    expect(moved.kept).toEqual(moved.raw);
  });
});
