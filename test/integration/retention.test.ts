// MAINLINE_RETENTION_DAYS (default 90): the periodic pass deletes uploads older than that with their
// attempts, so the database stops growing with history. Tests stay with their status and history;
// newer results are untouched; 0 keeps everything.
import { beforeEach, describe, expect, it } from 'vitest';
import { runHealthSweep } from '../../src/app/health/sweep.ts';
import { countPasses } from '../../src/store/uploads/passes.ts';
import { REPO } from '../support/app.ts';
import { storedFailureTexts } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const DAY = 86_400_000;

const START = Date.UTC(2026, 0, 1);
let clock = START;
beforeEach(() => {
  clock = START;
});

/** A fresh app for every test of the enclosing describe block, under `env`, its clock at START. */
function useRetentionApp(env: Record<string, string> = {}) {
  const app = useTestApp({ env, now: () => clock, perTest: true });
  const send = (sha: string, fail: boolean) =>
    upload(
      app,
      app.orgToken,
      [{ name: 'r.xml', content: junitXml([{ name: 'steady' }, { name: 'shaky', fail: fail && 'boom' }]) }],
      {
        sha,
      },
    );
  const sweep = () =>
    runHealthSweep({ db: app.db.database.db, config: app.config, now: () => clock, caches: app.caches });
  const stored = async () => {
    const db = app.db.database.db;
    const count = async (table: 'test_results' | 'uploads' | 'test_cases') =>
      Number(
        (
          await db
            .selectFrom(table)
            .select(({ fn }) => fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return {
      uploads: await count('uploads'),
      passes: await countPasses(db),
      results: await count('test_results'),
      tests: await count('test_cases'),
    };
  };
  return {
    app,
    get token() {
      return app.orgToken;
    },
    start: START,
    send,
    sweep,
    stored,
    advance: (days: number) => {
      clock += days * DAY;
    },
  };
}

/** Names of the tests list-failing-tests shows for the first day (when the first upload came). */
async function failing(s: ReturnType<typeof useRetentionApp>): Promise<string[]> {
  const res = await s.app.post(
    '/v1/flaky-tests/list-failing-tests',
    {
      repo: REPO,
      org_url_slug: 'acme',
      start_time: new Date(s.start).toISOString(),
      end_time: new Date(s.start + DAY).toISOString(),
      page_query: { page_size: 10 },
    },
    s.token,
  );
  expect(res.statusCode, res.body).toBe(200);
  return res.json().tests.map((x: { name: string }) => x.name);
}

describe('result retention', () => {
  const s = useRetentionApp();

  it('deletes uploads older than the retention with their attempts, and keeps the tests and newer results', async () => {
    expect((await s.send('old', true)).statusCode).toBe(200);
    s.advance(60);
    expect((await s.send('newer', false)).statusCode).toBe(200);
    expect(await s.stored()).toEqual({ uploads: 2, passes: 3, results: 1, tests: 2 });
    expect(await failing(s)).toEqual(['shaky']);

    // Day 60: both uploads are within 90 days.
    expect(await s.sweep()).toMatchObject({ prunedUploads: 0, prunedAttempts: 0 });
    s.advance(31);
    // Day 91: the first upload (1 pass, 1 failure) is past 90 days, the second is not.
    expect(await s.sweep()).toMatchObject({ prunedUploads: 1, prunedAttempts: 2 });
    expect(await s.stored()).toEqual({ uploads: 1, passes: 2, results: 0, tests: 2 });

    // Reads answer from what is left: the pruned failure is gone from list-failing-tests.
    expect(await failing(s)).toEqual([]);
    // Pruning is idempotent.
    expect(await s.sweep()).toMatchObject({ prunedUploads: 0 });
  });

  it('deletes the failure texts only pruned uploads used, and keeps those a kept upload used', async () => {
    const sendTexts = (sha: string, own: string) =>
      upload(
        s.app,
        s.token,
        [
          {
            name: 'r.xml',
            content: junitXml([
              { name: 'shaky', fail: own },
              { name: 'steady', fail: 'shared' },
            ]),
          },
        ],
        { sha },
      );
    const texts = () => storedFailureTexts(s.app);
    expect((await sendTexts('old', 'first')).statusCode).toBe(200);
    s.advance(60);
    expect((await sendTexts('newer', 'second')).statusCode).toBe(200);
    expect(await texts()).toEqual(['first', 'second', 'shared']);
    s.advance(32);
    // Day 92: the first upload is pruned; 'first' was only its, 'shared' the second upload used too.
    // (A day later than the upload itself: a text's last use is moved at most daily.)
    expect(await s.sweep()).toMatchObject({ prunedUploads: 1, prunedTexts: 1 });
    expect(await texts()).toEqual(['second', 'shared']);
    expect(await s.sweep()).toMatchObject({ prunedUploads: 0, prunedTexts: 0 });
    // A text uploaded again after retention deleted it is stored again.
    s.advance(100);
    expect(await s.sweep()).toMatchObject({ prunedUploads: 1, prunedTexts: 2 });
    expect((await sendTexts('again', 'second')).statusCode).toBe(200);
    expect(await texts()).toEqual(['second', 'shared']);
    const shown = await s.app.post(
      '/v1/flaky-tests/list-failing-tests',
      {
        repo: REPO,
        org_url_slug: 'acme',
        start_time: new Date(s.start + 191 * DAY).toISOString(),
        end_time: new Date(s.start + 193 * DAY).toISOString(),
        page_query: { page_size: 10 },
      },
      s.token,
    );
    expect(shown.statusCode, shown.body).toBe(200);
    expect(
      shown
        .json()
        .tests.map((x: { name: string }) => x.name)
        .sort(),
    ).toEqual(['shaky', 'steady']);
  });
});

describe('result retention with MAINLINE_RETENTION_DAYS=0', () => {
  const s = useRetentionApp({ MAINLINE_RETENTION_DAYS: '0' });

  it('keeps everything with MAINLINE_RETENTION_DAYS=0', async () => {
    await s.send('old', true);
    s.advance(400);
    expect(await s.sweep()).toMatchObject({ prunedUploads: 0, prunedAttempts: 0 });
    expect(await s.stored()).toEqual({ uploads: 1, passes: 1, results: 1, tests: 2 });
  });
});

describe('result retention with MAINLINE_RETENTION_DAYS=30', () => {
  const s = useRetentionApp({ MAINLINE_RETENTION_DAYS: '30' });

  it('refuses a monitor window longer than the results are kept, saying why', async () => {
    await s.send('one', false);
    const update = (windowHours: number) =>
      s.app.post(
        '/v1/flaky-tests/update-repository-settings',
        {
          repo: REPO,
          org_url_slug: 'acme',
          settings: {
            monitors: {
              failure_count: [
                {
                  id: 'c',
                  name: 'c',
                  detection_type: 'broken',
                  window_hours: windowHours,
                  resolution_timeout_hours: windowHours,
                  branches: ['main'],
                },
              ],
            },
          },
        },
        s.token,
      );
    const tooLong = await update(721);
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error.details[0]).toMatchObject({
      path: '$.settings.monitors.failure_count[0].window_hours',
      expected: 'a positive number of hours up to 720 (results are kept 30 days, MAINLINE_RETENTION_DAYS)',
    });
    expect((await update(720)).statusCode).toBe(200);
  });
});
