// Issue 28, durations: the slowest tests by their recent mean and the repository's test time and CI
// time lost per day (…/durations), and a test's mean duration per day (its page), from the rows
// migration 0028 adds and ingest keeps (store/uploads/durations.ts), the means folded in after the
// ingest transaction (migration 0030); retention takes an upload back out of them. Through the real
// HTTP stack, both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHealthSweep } from '../../src/app/health/sweep.ts';
import { FOLD_AFTER_PENDING, FOLD_MEANS_AFTER } from '../../src/store/uploads/duration-writes.ts';
import { slowestTests } from '../../src/store/uploads/durations.ts';
import { decodeDetails, decodeOrdinals } from '../../src/store/uploads/pass-codec.ts';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { chartName, getPage, signIn, tableRows } from '../support/dashboard.ts';
import { repositoryRow } from '../support/reads.ts';
import { upload } from '../support/upload.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BASE = '/acme/repos/github.com/acme/web';

let t: TestApp;
let token: string;
// A Wednesday; weeks start on Monday 2026-03-30.
let clock = Date.UTC(2026, 3, 1, 10, 20);

beforeAll(async () => {
  // No idle fold: the tests look at what is listed between uploads (ingest-idle-fold.test.ts tests it).
  t = await buildTestApp({ MAINLINE_RETENTION_DAYS: '30', MAINLINE_FOLD_IDLE_MS: '0' }, { now: () => clock });
  token = await t.token('acme');
});

/** A page, signed in now (the clock moves by weeks; a session lasts hours). */
async function view(url: string) {
  return getPage(t, url, await signIn(t, token));
}
afterAll(() => t.close());

/** A report: per test, its attempts in order as [outcome, seconds or null for no time attribute]. */
function report(tests: Record<string, [outcome: 'pass' | 'fail', seconds: number | null][]>): string {
  const at = new Date(clock).toISOString().slice(0, 19);
  const body = Object.entries(tests)
    .flatMap(([name, attempts]) =>
      attempts.map(([outcome, seconds]) => {
        const attrs = `name="${name}" classname="pkg.Dur" timestamp="${at}"${seconds === null ? '' : ` time="${seconds}"`}`;
        return outcome === 'pass'
          ? `<testcase ${attrs}/>`
          : `<testcase ${attrs}><failure message="boom">boom</failure></testcase>`;
      }),
    )
    .join('');
  return `<testsuites><testsuite name="dur">${body}</testsuite></testsuites>`;
}

let commit = 0;
async function send(tests: Parameters<typeof report>[0]): Promise<void> {
  commit++;
  const res = await upload(t, token, [{ name: 'r.xml', content: report(tests) }], { sha: `feed${commit}` });
  expect(res.statusCode, res.body).toBe(200);
}

/** The slowest-tests table: [name, mean, timed attempts] per row. */
async function slowest(): Promise<string[][]> {
  const res = await view(`${BASE}/durations`);
  expect(res.statusCode, res.body).toBe(200);
  return tableRows(res.body).map(([, test, mean, count]) => [
    (test ?? '').split(' ')[0] as string,
    mean as string,
    count as string,
  ]);
}

async function testIdOf(name: string): Promise<string> {
  const res = await view(`${BASE}/tests?q=${name}`);
  const id = res.body.match(new RegExp(`href="${BASE}/tests/([0-9a-f-]+)"[^>]*>${name}<`))?.[1];
  if (id === undefined) throw new Error(`no test ${name}`);
  return id;
}

/** The last `n` figures of a chart's accessible name ("…: a, b, c."). */
function lastFigures(label: string, n: number): string[] {
  return (label.split(': ').at(-1) ?? '').replace(/\.$/, '').split(', ').slice(-n);
}

const db = () => t.db.database.db;

async function repoId(): Promise<string> {
  return (await repositoryRow(t, REPO)).id;
}

/**
 * The duration rows as the stored attempts give them: per test, the sums of the week its row names
 * and of the week before; per day, the timed attempts and the failures of tests that passed in the
 * same upload.
 */
async function recomputed() {
  const attempts: { upload: string; ordinal: number; at: number; ms: number | null; failed: boolean }[] = [];
  const results = await db()
    .selectFrom('test_results as r')
    .innerJoin('test_cases as c', 'c.id', 'r.test_case_id')
    .select(['r.upload_id', 'r.at', 'r.duration_ms', 'r.outcome', 'c.ordinal'])
    .execute();
  for (const r of results)
    attempts.push({
      upload: r.upload_id,
      ordinal: Number(r.ordinal),
      at: Number(r.at),
      ms: r.duration_ms === null ? null : Number(r.duration_ms),
      failed: r.outcome === 'failed',
    });
  for (const u of await db().selectFrom('upload_passes').selectAll().execute()) {
    const set = decodeOrdinals(u.ordinals, Number(u.at_min), Number(u.at_max));
    const details = decodeDetails(u.details, Number(u.count));
    set.ordinals.forEach((o, i) => {
      const ms = details.durations[i] as number;
      attempts.push({
        upload: u.upload_id,
        ordinal: o,
        at: Number(u.at_min) + (details.atOffsets[i] as number),
        ms: ms < 0 ? null : ms,
        failed: false,
      });
    });
  }
  const passedIn = new Set(attempts.filter((a) => !a.failed).map((a) => `${a.upload}|${a.ordinal}`));
  const weekOf = (at: number) => Math.floor((Math.floor(at / DAY) + 3) / 7);
  const means = (await db().selectFrom('test_duration_means').selectAll().execute()).map((m) => {
    const of = (week: number) =>
      attempts.filter((a) => a.ordinal === Number(m.ordinal) && a.ms !== null && weekOf(a.at) === week);
    const cur = of(Number(m.week));
    const prev = of(Number(m.week) - 1);
    return [
      Number(m.ordinal),
      Number(m.week),
      cur.reduce((s, a) => s + (a.ms ?? 0), 0),
      cur.length,
      prev.reduce((s, a) => s + (a.ms ?? 0), 0),
      prev.length,
    ];
  });
  const days = new Map<number, number[]>();
  for (const a of attempts) {
    const d = days.get(Math.floor(a.at / DAY)) ?? [0, 0, 0, 0];
    const retried = a.failed && passedIn.has(`${a.upload}|${a.ordinal}`);
    if (a.ms !== null) {
      d[0] = (d[0] ?? 0) + a.ms;
      d[1] = (d[1] ?? 0) + 1;
      if (retried) d[3] = (d[3] ?? 0) + a.ms;
    }
    if (retried) d[2] = (d[2] ?? 0) + 1;
    days.set(Math.floor(a.at / DAY), d);
  }
  return { means: means.sort((a, b) => (a[0] as number) - (b[0] as number)), days };
}

async function stored() {
  const means = (await db().selectFrom('test_duration_means').selectAll().execute())
    .map((m) => [m.ordinal, m.week, m.cur_sum_ms, m.cur_count, m.prev_sum_ms, m.prev_count].map(Number))
    .sort((a, b) => (a[0] as number) - (b[0] as number));
  const days = new Map(
    (await db().selectFrom('repo_time_days').selectAll().execute())
      .map(
        (d) => [Number(d.day), [d.test_ms, d.timed, d.retried_failures, d.retried_ms].map(Number)] as const,
      )
      .filter(([, v]) => v.some((x) => x !== 0)),
  );
  return { means, days };
}

describe('durations on the dashboard', () => {
  it('lists the slowest tests by recent mean, with test time and CI time lost per day', async () => {
    // flaky fails after 3 s, then passes on the retry after 1 s: 3 s of CI time lost.
    await send({
      slow: [['pass', 4]],
      mid: [['pass', 2.5]],
      flaky: [
        ['fail', 3],
        ['pass', 1],
      ],
      fast: [['pass', 0.1]],
      untimed: [['pass', null]],
    });
    expect(await slowest()).toEqual([
      ['slow', '4.0 s', '1'],
      ['mid', '2.5 s', '1'],
      ['flaky', '2.0 s', '2'],
      ['fast', '100 ms', '1'],
    ]);
    const page = await view(`${BASE}/durations`);
    expect(lastFigures(chartName(page.body, 'chart-test-time'), 2)).toEqual(['0 s', '11 s']);
    expect(lastFigures(chartName(page.body, 'chart-retried'), 2)).toEqual(['0', '1']);
    expect(lastFigures(chartName(page.body, 'chart-time-lost'), 1)).toEqual(['3 s']);
    expect(page.body).toContain('3 s lost to 1 failure that passed on a retry');
    // The repository page and the overview give the last 7 days' impact, linked to the page.
    const repoPage = (await view(BASE)).body;
    expect(repoPage).toContain(
      `Last 7 days: 1 failure passed on a retry (<strong>3 s</strong> of CI time lost) · 0 merge-queue runs failed by flaky tests. <a href="${BASE}/durations">Per day</a>`,
    );
    const overview = (await view('/acme')).body;
    expect(overview).toContain(`<dt>Retried failures, 7 d</dt><dd><a href="${BASE}/durations">1</a></dd>`);
    expect(overview).toContain(`<dt>CI time lost, 7 d</dt><dd><a href="${BASE}/durations">3 s</a></dd>`);
  });

  it('takes the week before into the mean, adds within a week, and drops tests not timed for two weeks', async () => {
    clock += 7 * DAY;
    await send({ slow: [['pass', 2]], mid: [['pass', 4.5]] });
    clock += HOUR;
    await send({ slow: [['pass', 2]] });
    // slow: (4 + 2 + 2) / 3; mid: (2.5 + 4.5) / 2; flaky and fast as last week.
    expect(await slowest()).toEqual([
      ['mid', '3.5 s', '2'],
      ['slow', '2.7 s', '3'],
      ['flaky', '2.0 s', '2'],
      ['fast', '100 ms', '1'],
    ]);
    // The test page's trend: the mean per day, one week apart.
    const res = await view(`${BASE}/tests/${await testIdOf('slow')}`);
    expect(res.statusCode).toBe(200);
    const days = lastFigures(chartName(res.body, 'duration-chart'), 8);
    expect(days).toEqual(['4.0 s', 'none', 'none', 'none', 'none', 'none', 'none', '2.0 s']);

    // Two weeks on only fast ran: the others' latest timed week is too old to be listed.
    clock += 14 * DAY;
    await send({ fast: [['pass', 0.3]] });
    expect(await slowest()).toEqual([['fast', '300 ms', '1']]);
    expect(await stored()).toEqual(await recomputed());
  });

  it('keeps the rows equal to what the stored attempts give once retention deletes an upload', async () => {
    const before = await stored();
    clock = Date.UTC(2026, 4, 2, 11, 0);
    await runHealthSweep({ db: db(), config: t.config, now: () => clock, caches: t.caches });
    const after = await stored();
    expect(after).toEqual(await recomputed());
    // The first upload (April 1) is gone from its day and from the weeks that held it.
    expect(before.days.has(Math.floor(Date.UTC(2026, 3, 1) / DAY))).toBe(true);
    expect(after.days.has(Math.floor(Date.UTC(2026, 3, 1) / DAY))).toBe(false);
    const all = await slowestTests(db(), await repoId(), 0, 10);
    expect(all.map((s) => [s.name, s.meanMs, s.count])).toEqual([
      ['mid', 4500, 1],
      ['slow', 2000, 2],
      ['fast', 300, 1],
    ]);
  });

  it('adds an upload to the means after its transaction, before the page reads them or once 32 are pending', async () => {
    const pending = async () =>
      (await db().selectFrom('duration_means_pending').select('upload_id').execute()).length;
    const runsPending = async () =>
      (
        await db()
          .selectFrom('duration_means_pending')
          .select('upload_id')
          .where('runs_pending', '=', 1)
          .execute()
      ).length;
    // Ingest lists the upload; the means are as they were until a read folds it in.
    const before = await stored();
    await send({ slow: [['pass', 9]] });
    expect(await pending()).toBe(1);
    expect((await stored()).means).toEqual(before.means);
    // fast: its week (April 20) is the week before this one.
    expect(await slowest()).toEqual([
      ['slow', '9.0 s', '1'],
      ['fast', '300 ms', '1'],
    ]);
    expect(await pending()).toBe(0);
    expect(await stored()).toEqual(await recomputed());
    // Without a read, the upload that makes FOLD_AFTER_PENDING listed with their counts pending has
    // those counts folded into the hour rows once committed, in the background (its answer does not
    // wait for the fold); they stay listed for the means, which are as they were.
    for (let i = 1; i < FOLD_AFTER_PENDING; i++) {
      clock += 60_000;
      await send({ fast: [['pass', 0.5]] });
      expect(await pending()).toBe(i);
    }
    const means = (await stored()).means;
    clock += 60_000;
    await send({ fast: [['pass', 0.5]] });
    await t.caches.meansFolds.settled();
    expect([await runsPending(), await pending()]).toEqual([0, FOLD_AFTER_PENDING]);
    expect((await stored()).means).toEqual(means);
    // The upload that makes FOLD_MEANS_AFTER listed has everything folded.
    for (let i = FOLD_AFTER_PENDING + 1; i < FOLD_MEANS_AFTER; i++) {
      clock += 60_000;
      await send({ fast: [['pass', 0.5]] });
      await t.caches.meansFolds.settled();
      expect(await pending()).toBe(i);
      expect(await runsPending()).toBe(i % FOLD_AFTER_PENDING);
    }
    clock += 60_000;
    await send({ fast: [['pass', 0.5]] });
    await t.caches.meansFolds.settled();
    expect(await pending()).toBe(0);
    expect(await stored()).toEqual(await recomputed());
  });

  it('folds the uploads a quiet repository has listed in the periodic pass, without a page read', async () => {
    const pending = async () =>
      (await db().selectFrom('duration_means_pending').select('upload_id').execute()).length;
    clock += 60_000;
    await send({ mid: [['pass', 6]] });
    clock += 60_000;
    await send({ mid: [['pass', 8]] });
    expect(await pending()).toBe(2);
    const swept = await runHealthSweep({ db: db(), config: t.config, now: () => clock, caches: t.caches });
    expect([swept.foldedUploads, swept.foldFailures]).toEqual([2, 0]);
    expect(await pending()).toBe(0);
    expect(await stored()).toEqual(await recomputed());
    const mid = (await slowestTests(db(), await repoId(), 0, 10)).find((s) => s.name === 'mid');
    expect([mid?.meanMs, mid?.count]).toEqual([7000, 2]);
  });

  it('takes out of the means only the uploads folded in when retention deletes them', async () => {
    // One more upload, still pending when retention deletes it with the folded ones.
    await send({ mid: [['pass', 7]] });
    expect(await db().selectFrom('duration_means_pending').select('upload_id').execute()).toHaveLength(1);
    clock += 31 * DAY;
    await runHealthSweep({ db: db(), config: t.config, now: () => clock, caches: t.caches });
    expect(await db().selectFrom('duration_means_pending').select('upload_id').execute()).toHaveLength(0);
    expect(await db().selectFrom('uploads').select('id').execute()).toHaveLength(0);
    expect(await stored()).toEqual(await recomputed());
    expect(await slowest()).toEqual([]);
    // A test timed again after its rows emptied starts from its new attempts alone.
    await send({ mid: [['pass', 1]] });
    expect(await slowest()).toEqual([['mid', '1.0 s', '1']]);
    expect(await stored()).toEqual(await recomputed());
  });
});
