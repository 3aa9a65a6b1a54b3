// Issue 25: what a burst of uploads leaves listed (fewer than FOLD_AFTER_PENDING with their counts
// pending, fewer than FOLD_MEANS_AFTER for the means) is folded a moment after the repository's last
// upload (MAINLINE_FOLD_IDLE_MS), without a read, so the first read after the burst need not: their
// counts, and the means too once FOLD_AFTER_PENDING are listed. Through
// the real HTTP stack, both engines. Nothing here depends on the delay: the first app's is longer than
// any test and its armed folds are run by call (MeansFolds.foldIdleNow); the second app's short timer
// is waited for as an event, not a duration.
import { afterEach, describe, expect, it } from 'vitest';
import { FOLD_AFTER_PENDING } from '../../src/store/uploads/duration-writes.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { repositoryRow } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';

const REPO = { host: 'github.com', owner: 'acme', name: 'idle' };
const clock = Date.UTC(2026, 3, 1, 10, 20);

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function appWith(idleMs: string): Promise<{ t: TestApp; token: string }> {
  t = await buildTestApp({ MAINLINE_FOLD_IDLE_MS: idleMs }, { now: () => clock });
  return { t, token: await t.token('acme') };
}

async function send(app: TestApp, token: string, sha: string): Promise<void> {
  const xml = junitXml([
    { name: 'a', time: 1 },
    { name: 'b', time: 2, fail: 'boom' },
    { name: 'c', time: 0.5 },
  ]);
  const res = await upload(app, token, [{ name: 'r.xml', content: xml }], { repo: REPO, sha });
  expect(res.statusCode, res.body).toBe(200);
}

/** Listed uploads, those with their counts pending, and what the hour rows and means hold. */
async function state(app: TestApp) {
  const db = app.db.database.db;
  const listed = await db.selectFrom('duration_means_pending').select('runs_pending').execute();
  const runs = await db
    .selectFrom('test_run_hours')
    .select((eb) => [
      eb.fn.sum<number>('passed').as('passed'),
      eb.fn.sum<number>('failed').as('failed'),
      eb.fn.sum<number>('duration_count').as('timed'),
    ])
    .executeTakeFirstOrThrow();
  const means = await db
    .selectFrom('test_duration_means')
    .select((eb) => [eb.fn.sum<number>('cur_count').as('timed')])
    .executeTakeFirstOrThrow();
  return {
    listed: listed.length,
    runsPending: listed.filter((r) => Number(r.runs_pending) === 1).length,
    passed: Number(runs.passed ?? 0),
    failed: Number(runs.failed ?? 0),
    timed: Number(runs.timed ?? 0),
    meansTimed: Number(means.timed ?? 0),
  };
}

describe('the idle fold after a burst of uploads', () => {
  it('folds the counts a burst left listed into the hour rows without a read, and the means from 8 listed on', async () => {
    const { t: app, token } = await appWith('3600000');
    const first = FOLD_AFTER_PENDING - 3;
    for (let i = 0; i < first; i++) await send(app, token, `cafe${i}`);
    await app.caches.meansFolds.settled();
    // Too few for a fold after the answer: all listed, nothing in the rollups yet.
    expect(await state(app)).toEqual({
      listed: first,
      runsPending: first,
      passed: 0,
      failed: 0,
      timed: 0,
      meansTimed: 0,
    });
    // The repository's idle fold is armed; run now, it folds their counts into the hour rows and
    // leaves them listed for the means (fewer than FOLD_AFTER_PENDING).
    expect(app.caches.meansFolds.idleArmed).toBe(1);
    await app.caches.meansFolds.foldIdleNow();
    expect(await state(app)).toEqual({
      listed: first,
      runsPending: 0,
      passed: 2 * first,
      failed: first,
      timed: 3 * first,
      meansTimed: 0,
    });
    // get-test-details (a read of the hour rows) finds nothing left to fold.
    const id = (
      await app.db.database.db
        .selectFrom('test_cases')
        .select('id')
        .where('repo_id', '=', (await repositoryRow(app, REPO)).id)
        .where('name', '=', 'b')
        .executeTakeFirstOrThrow()
    ).id;
    const res = await app.post(
      '/v1/flaky-tests/get-test-details',
      { repo: REPO, org_url_slug: 'acme', test_id: id },
      token,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect((await state(app)).listed).toBe(first);
    // Three more (their counts too few for a fold after the answer): once FOLD_AFTER_PENDING are
    // listed, the idle fold folds everything.
    for (let i = first; i < FOLD_AFTER_PENDING; i++) await send(app, token, `cafe${i}`);
    await app.caches.meansFolds.settled();
    expect(await state(app)).toMatchObject({ listed: FOLD_AFTER_PENDING, runsPending: 3, meansTimed: 0 });
    await app.caches.meansFolds.foldIdleNow();
    const all = FOLD_AFTER_PENDING;
    expect(await state(app)).toEqual({
      listed: 0,
      runsPending: 0,
      passed: 2 * all,
      failed: all,
      timed: 3 * all,
      meansTimed: 3 * all,
    });
  });

  it('runs on its own once the repository has been quiet for the delay', async () => {
    const { t: app, token } = await appWith('1');
    await send(app, token, 'beef1');
    await send(app, token, 'beef2');
    // Waits for the timer to have fired (an event, however long it takes), then for its fold.
    while (app.caches.meansFolds.idleArmed > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await app.caches.meansFolds.settled();
    expect(await state(app)).toMatchObject({
      listed: 2,
      runsPending: 0,
      passed: 4,
      failed: 2,
      meansTimed: 0,
    });
  });

  it('arms nothing with MAINLINE_FOLD_IDLE_MS=0, and drops its timers when the app closes', async () => {
    const off = await appWith('0');
    await send(off.t, off.token, 'dead1');
    expect(off.t.caches.meansFolds.idleArmed).toBe(0);
    expect((await state(off.t)).listed).toBe(1);
    await off.t.close();
    const on = await appWith('3600000');
    await send(on.t, on.token, 'dead2');
    expect(on.t.caches.meansFolds.idleArmed).toBe(1);
    await on.t.app.close();
    expect(on.t.caches.meansFolds.idleArmed).toBe(0);
    await on.t.db.cleanup();
    t = undefined;
  });
});
