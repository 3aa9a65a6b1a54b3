// Issue 28: the queue page's charts (merged per hour, time in queue p50/p95, failures and flakes),
// server-rendered SVG from the queue's finished PRs and runs (live and archived) and its
// flake-protection judgements, over the last 24 hours (hourly) or 7 and 30 days (daily).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartsOf, HOUR_MS, hourFigures, percentile } from '../../src/app/dashboard/queue-charts.ts';
import { REPO } from '../support/app.ts';
import { chartName, getPage, signIn } from '../support/dashboard.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { queueArchiveRows, queuePrRows } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const base = '/acme/repos/github.com/acme/web';

/** The 24 hourly figures of a series in a chart's name ("…: 0, 1, 0; …"). */
function series(label: string, after: string): string[] {
  const start = label.indexOf(after);
  expect(start, `${after} in ${label}`).toBeGreaterThan(-1);
  const rest = label.slice(start + after.length);
  return (rest.split(/;|\.$/)[0] ?? '').split(', ');
}

describe('the queue page charts', () => {
  let s: GitScenario;
  let cookie: string;
  const start = Date.UTC(2026, 10, 2, 9);

  /** CI uploads results for the run testing PR n, then reports its status. */
  const runCi = async (n: number, cases: Parameters<typeof junitXml>[0], state: 'success' | 'failure') => {
    const run = (await s.runsInProgress()).find((r) => r.tested.includes(n));
    expect(run, `a run testing #${n}`).toBeDefined();
    const res = await upload(s.t, s.token, [{ name: 'ci.xml', content: junitXml(cases) }], {
      sha: run?.sha ?? '',
      branch: 'ci-checkout',
    });
    expect(res.statusCode, res.body).toBe(200);
    await s.post('/v1/git/reportStatus', { repo: REPO, sha: run?.sha, context: 'ci', state });
    await s.settle();
    await s.settle();
  };

  beforeAll(async () => {
    s = await GitScenario.create({ directMergeMode: 'off', flakeProtection: 'ignore_quarantined' });
    for (const [n, file] of [
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ] as const)
      await s.openPr(n, { [`${file}.txt`]: `${file}\n` }, `Add ${file}`);
    // test_flaky failed and passed on one commit: FLAKY, quarantined.
    const xml = (fail: boolean) => junitXml([{ name: 'test_flaky', ...(fail ? { fail: 'timeout' } : {}) }]);
    await upload(s.t, s.token, [{ name: 'r.xml', content: xml(true) }], { sha: 'f1a4e00' });
    await upload(s.t, s.token, [{ name: 'r.xml', content: xml(false) }], { sha: 'f1a4e00' });
    // 09:00: #1's run fails on the quarantined test only: flake protection ignores it, #1 merges.
    await s.submit(1);
    await s.settle();
    s.clock += 4 * MIN;
    await runCi(1, [{ name: 'test_flaky', fail: 'AssertionError' }, { name: 'test_ok' }], 'failure');
    expect((await s.pr(1)).state).toBe('merged');
    // 11:00: #2's run fails on a real test: a failure; #3 then merges after 30 minutes in the queue.
    s.clock = start + 2 * HOUR;
    await s.submit(2);
    await s.settle();
    await runCi(2, [{ name: 'test_ok', fail: 'AssertionError: real' }], 'failure');
    expect((await s.pr(2)).state).toBe('failed');
    await s.submit(3);
    await s.settle();
    s.clock += 30 * MIN;
    await runCi(3, [{ name: 'test_ok' }], 'success');
    expect((await s.pr(3)).state).toBe('merged');
    s.clock = start + 3 * HOUR + 15 * MIN;
    cookie = await signIn(s.t, s.token);
  }, 180_000);
  afterAll(() => s.close());

  it('shows merged per hour, time in queue and failures and flakes of the last 24 hours, hour by hour', async () => {
    const res = await getPage(s.t, `${base}/queues/main`, cookie);
    expect(res.statusCode).toBe(200);
    const body = res.body;
    // After the queue, the runs and the finished PRs; before the folded settings.
    expect(body.indexOf('<h2>Recently finished</h2>')).toBeLessThan(body.indexOf('id="queue-charts"'));
    expect(body.indexOf('id="queue-charts"')).toBeLessThan(body.indexOf('<details id="queue-settings">'));
    // 24 hours, the last is 12:00 (now 12:15): 09:00 is index 20, 11:00 index 22.
    const merged = chartName(body, 'chart-merged');
    expect(merged).toContain('hourly from 13:00 UTC');
    const perHour = series(merged, 'hourly from 13:00 UTC: ');
    expect(perHour).toHaveLength(24);
    expect(perHour.slice(19)).toEqual(['0', '1', '0', '1', '0']);
    expect(merged).toContain('2 in all');
    const failures = chartName(body, 'chart-failures');
    expect(series(failures, 'hourly from 13:00 UTC: ').slice(19)).toEqual(['0', '0', '0', '1', '0']);
    expect(series(failures, 'flaky failures: ').slice(19)).toEqual(['0', '1', '0', '0', '0']);
    const waits = chartName(body, 'chart-time-in-queue');
    const p50 = series(waits, 'hourly from 13:00 UTC: p50 ');
    expect(p50.slice(0, 20).every((v) => v === 'none')).toBe(true);
    expect(p50[22]).toMatch(/^3\d min$/);
    expect(body).toMatch(
      /From submission to merge, 2 PRs: p50 <strong>\d+ min<\/strong>, p95 <strong>3\d min<\/strong>/,
    );
    // Each bar and point has its own title for pointer users; no script beyond the reload one.
    expect(body).toMatch(/<title>09:00: 1 merged<\/title>/);
    expect([...body.matchAll(/<script>/g)]).toHaveLength(1);
  });

  it('overview: each queue with its state, depth and PRs merged in 24 hours (live and archived)', async () => {
    const body = (await getPage(s.t, '/acme', cookie)).body;
    expect(body).toMatch(
      /<a href="[^"]+\/queues\/main" class="mono">main<\/a> <span class="badge[^"]*">[^<]+<\/span> <span class="muted">0 PRs in the queue · 2 merged in 24 h<\/span>/,
    );
  });

  it('leaves out what is older than 24 hours, reading archived PRs and runs too', async () => {
    // #1 and its run left the live state: its figures above came from the archive.
    const archived = await queueArchiveRows(s.t);
    expect(archived).toContainEqual({ kind: 'pr', pr_number: 1 });
    expect(archived.filter((r) => r.kind === 'run').length).toBeGreaterThan(0);
    expect((await queuePrRows(s.t)).map((r) => r.number)).not.toContain(1);
    s.clock = start + 24 * HOUR + 30 * MIN;
    // A session lasts 12 hours: sign in again.
    const later = (await getPage(s.t, `${base}/queues/main`, await signIn(s.t, s.token))).body;
    // Now 09:30 the next day: the window starts at 10:00; only 11:00's figures remain (index 1).
    const merged = series(chartName(later, 'chart-merged'), 'hourly from 10:00 UTC: ');
    expect(merged.slice(0, 3)).toEqual(['0', '1', '0']);
    expect(chartName(later, 'chart-merged')).toContain('1 in all');
    expect(series(chartName(later, 'chart-failures'), 'flaky failures: ').every((v) => v === '0')).toBe(true);
    s.clock = start + 3 * HOUR + 15 * MIN;
  });

  it('keeps the hours it computed: final ones are read back as stored', async () => {
    const db = s.t.db.database.db;
    const stored = await db
      .selectFrom('queue_chart_hours' as never)
      .selectAll()
      .execute();
    expect(stored.length).toBeGreaterThanOrEqual(24);
    /** Edits the stored first hour to 7 merged, computed at `computedAt`; the page's figures for it and the hour before. */
    const editedFirstHour = async (computedAt: number) => {
      await db
        .updateTable('queue_chart_hours' as never)
        .set({ merged: 7, computed_at: computedAt } as never)
        .where('hour' as never, '=', start as never)
        .execute();
      const body = (await getPage(s.t, `${base}/queues/main`, cookie)).body;
      return series(chartName(body, 'chart-merged'), 'hourly from 13:00 UTC: ').slice(19, 21);
    };
    // An hour computed long after it ended is final: the page shows it as stored, even if edited.
    expect(await editedFirstHour(start + 10 * HOUR)).toEqual(['0', '7']);
    // One not final yet (computed within 3 hours of its end) is computed again after a minute.
    expect(await editedFirstHour(start + 2 * HOUR)).toEqual(['0', '1']);
  });

  it('counts the run failed by a flaky test in the impact figures: overview, repository and durations pages', async () => {
    expect((await getPage(s.t, '/acme', cookie)).body).toContain(
      '<dt>Queue runs failed by flakes, 7 d</dt><dd>1</dd>',
    );
    expect((await getPage(s.t, base, cookie)).body).toContain('1 merge-queue run failed by flaky tests.');
    const durations = (await getPage(s.t, `${base}/durations`, cookie)).body;
    expect(series(chartName(durations, 'chart-flaky-runs'), 'daily from Oct 4 (UTC): ').at(-1)).toBe('1');
  });

  it('shows 7 and 30 days day by day, from the same hours, beyond the 24-hour view', async () => {
    const week = (await getPage(s.t, `${base}/queues/main?charts=7d`, cookie)).body;
    expect(week).toContain('<h2 id="queue-charts">Last 7 days</h2>');
    expect(week).toContain(`<a href="${base}/queues/main?charts=30d#queue-charts">30 days</a>`);
    expect(week).toContain(
      `<a href="${base}/queues/main?charts=7d#queue-charts" aria-current="page">7 days</a>`,
    );
    const merged = chartName(week, 'chart-merged');
    expect(series(merged, 'last 7 days, daily from Oct 27 (UTC): ')).toEqual([
      '0',
      '0',
      '0',
      '0',
      '0',
      '0',
      '2',
    ]);
    const failures = chartName(week, 'chart-failures');
    expect(series(failures, 'daily from Oct 27 (UTC): ').at(-1)).toBe('1');
    expect(series(failures, 'flaky failures: ').at(-1)).toBe('1');
    expect(series(chartName(week, 'chart-time-in-queue'), ' p95 ').at(-1)).toMatch(/^3\d min$/);
    // Three days on, the 24-hour view is empty; the day views still hold November 2.
    s.clock = start + 3 * 24 * HOUR + HOUR;
    const later = await signIn(s.t, s.token);
    const day = (await getPage(s.t, `${base}/queues/main`, later)).body;
    expect(chartName(day, 'chart-merged')).toContain('0 in all');
    const again = (await getPage(s.t, `${base}/queues/main?charts=7d`, later)).body;
    expect(series(chartName(again, 'chart-merged'), 'daily from Oct 30 (UTC): ')).toEqual([
      '0',
      '0',
      '0',
      '2',
      '0',
      '0',
      '0',
    ]);
    const month = (await getPage(s.t, `${base}/queues/main?charts=30d`, later)).body;
    const perDay = series(chartName(month, 'chart-merged'), 'last 30 days, daily from Oct 7 (UTC): ');
    expect(perDay).toHaveLength(30);
    expect(perDay[26]).toBe('2');
    expect(perDay.filter((v) => v !== '0')).toEqual(['2']);
    s.clock = start + 3 * HOUR + 15 * MIN;
  });

  it('is a page of the caller’s organization only', async () => {
    const theirs = await signIn(s.t, await s.t.token('globex'));
    expect((await getPage(s.t, `${base}/queues/main`, theirs)).statusCode).toBe(404);
  });
});

describe('chart figures', () => {
  it('takes nearest-rank percentiles', () => {
    expect(percentile([], 50)).toBeNull();
    expect(percentile([5], 95)).toBe(5);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], 95)).toBe(19);
  });

  it('counts a failed run flake protection judged flaky as a flake, not a failure, and drops superseded runs', () => {
    const now = Date.UTC(2026, 0, 1, 12, 30);
    const at = now - 10 * MIN;
    const figures = chartsOf(
      hourFigures(
        now - 30 * MIN - 23 * HOUR_MS,
        24,
        [{ id: 'p', state: 'merged', submittedAt: at - 5 * MIN, stateChangedAt: at }],
        [
          { id: 'r1', status: 'failed', createdAt: at, failureKind: 'checks_failed' },
          { id: 'r2', status: 'failed', createdAt: at, failureKind: 'checks_failed' },
          { id: 'r3', status: 'failed', createdAt: at, failureKind: 'superseded' },
        ],
        [{ runId: 'r1', decision: 'retried_flaky', at }],
        now,
      ),
    );
    expect(figures.failed.at(-1)).toBe(1);
    expect(figures.flaky.at(-1)).toBe(1);
    expect(figures.merged.at(-1)).toBe(1);
    expect(figures.p50.at(-1)).toBe(5 * MIN);
  });
});
