// The dashboard's failing-tests windows (store/dashboard/failing.ts) are kept before a page reads them,
// through the real HTTP stack, on both engines: a new repository's first upload keeps both windows in
// its transaction (its first page read finds them on its hours), a repository with earlier failures
// and no windows gets them from the hourly pass's startup run, not from an upload, and that pass's
// timer (runner/failing-windows.ts) moves the windows at an hour's start, by the app context's clock.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFailingWindowMoves } from '../../src/runner/failing-windows.ts';
import { failingWindowAt } from '../../src/store/dashboard/failing.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { getPage, signIn, tableRows } from '../support/dashboard.ts';
import { sweepContext } from '../support/sweep.ts';
import { junitXml, upload } from '../support/upload.ts';

const HOUR = 3_600_000;

describe('the failing-tests windows are kept before a page reads them', () => {
  let t: TestApp;
  let token: string;
  let clock = Date.UTC(2026, 10, 10, 12, 30);
  const errors: object[] = [];
  const log = { info: () => {}, error: (o: object) => errors.push(o) };

  const repoId = async (name: string) =>
    (await sql<{ id: string }>`select id from repositories where name = ${name}`.execute(t.db.database.db))
      .rows[0]?.id as string;
  /** The repository's kept windows: `hours lo..hi tests`, and their rows `hours name failures`. */
  const kept = async (name: string) => {
    const id = await repoId(name);
    const states = await sql<{ hours: number; lo: number; hi: number; tests: number }>`select hours, lo, hi,
      tests from failing_window_state where repo_id = ${id} order by hours`.execute(t.db.database.db);
    const rows = await sql<{ hours: number; name: string; failures: number }>`select hours, name, failures
      from test_failing_windows where repo_id = ${id} order by hours, name`.execute(t.db.database.db);
    return {
      states: states.rows.map(
        (s) => `${Number(s.hours)} ${Number(s.lo)}..${Number(s.hi)} ${Number(s.tests)}`,
      ),
      rows: rows.rows.map((r) => `${Number(r.hours)} ${r.name} ${Number(r.failures)}`),
    };
  };
  const at = (hours: number, now: number, tests: number) => {
    const w = failingWindowAt(hours, now);
    return `${hours} ${w.lo}..${w.hi} ${tests}`;
  };
  const send = async (name: string, cases: Parameters<typeof junitXml>[0], sha: string) => {
    const res = await upload(t, token, [{ name: 'r.xml', content: junitXml(cases) }], {
      repo: { host: 'github.com', owner: 'acme', name },
      sha,
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  /** Waits (up to 5 s) until `done` holds. */
  const until = async (done: () => Promise<boolean>) => {
    for (let i = 0; i < 100 && !(await done()); i++) await new Promise((r) => setTimeout(r, 50));
  };

  beforeAll(async () => {
    t = await buildTestApp({}, { now: () => clock });
    token = await t.token('acme');
  });
  afterAll(() => t.close());

  it('keeps both windows from a new repository’s first upload, so its first read finds them', async () => {
    await send(
      'fresh',
      [
        { name: 'test_a', fail: 'Error: a' },
        { name: 'test_a', fail: 'Error: a' },
        { name: 'test_b', fail: 'Error: b' },
        { name: 'test_c' },
      ],
      'f1',
    );
    const after = await kept('fresh');
    expect(after).toEqual({
      states: [at(24, clock, 2), at(168, clock, 2)],
      rows: ['24 test_a 2', '24 test_b 1', '168 test_a 2', '168 test_b 1'],
    });
    // A first upload with no failure keeps them too, empty.
    await send('quiet', [{ name: 'test_a' }], 'q1');
    expect(await kept('quiet')).toEqual({ states: [at(24, clock, 0), at(168, clock, 0)], rows: [] });
    // The page reads them as they are: no window moved or built by the read.
    const cookie = await signIn(t, token);
    const res = await getPage(t, '/acme/repos/github.com/acme/fresh/failing', cookie);
    expect(res.statusCode).toBe(200);
    expect(tableRows(res.body).map((r) => [r[0], r[1]])).toEqual([
      ['test_a pkg.Class', '2'],
      ['test_b pkg.Class', '1'],
    ]);
    expect(await kept('fresh')).toEqual(after);
  });

  it('leaves a repository with earlier failures to the hourly pass, which builds its windows at startup', async () => {
    await send('older', [{ name: 'test_a', fail: 'Error: a' }], 'o1');
    // Windows not kept while it already had failures (rollups rebuilt, or kept by nothing before).
    const id = await repoId('older');
    await sql`delete from test_failing_windows where repo_id = ${id}`.execute(t.db.database.db);
    await sql`delete from failing_window_state where repo_id = ${id}`.execute(t.db.database.db);
    clock += 60_000;
    await send('older', [{ name: 'test_b', fail: 'Error: b' }], 'o2');
    // An empty window would miss test_a's failure: the upload keeps none.
    expect(await kept('older')).toEqual({ states: [], rows: [] });
    const moves = startFailingWindowMoves(
      sweepContext(t, () => clock),
      log,
    );
    try {
      await until(async () => (await kept('older')).states.length === 2);
    } finally {
      await moves.stop();
    }
    expect(await kept('older')).toEqual({
      states: [at(24, clock, 2), at(168, clock, 2)],
      rows: ['24 test_a 1', '24 test_b 1', '168 test_a 1', '168 test_b 1'],
    });
    expect(errors).toEqual([]);
  });

  it('moves the windows at an hour’s start, by the app context’s clock', async () => {
    // A failure in the 24-hour window's first hour, which leaves it when the next hour starts.
    const first = failingWindowAt(24, clock).lo * HOUR + 5 * 60_000;
    const xml = junitXml([{ name: 'test_old', fail: 'Error: old' }]).replace(
      'name="test_old"',
      `name="test_old" timestamp="${new Date(first).toISOString().slice(0, 19)}"`,
    );
    const res = await upload(t, token, [{ name: 'r.xml', content: xml }], {
      repo: { host: 'github.com', owner: 'acme', name: 'fresh' },
      sha: 'f2',
    });
    expect(res.statusCode, res.body).toBe(200);
    const before = await kept('fresh');
    expect(before.states).toEqual([at(24, clock, 3), at(168, clock, 3)]);
    // The runner's clock runs in real time from 300 ms before the next hour.
    const start = Math.ceil(clock / HOUR) * HOUR - 300;
    const real = Date.now();
    const now = () => start + (Date.now() - real);
    const moves = startFailingWindowMoves(sweepContext(t, now), log);
    try {
      // Its startup run finds the windows on their hours.
      await new Promise((r) => setTimeout(r, 100));
      expect(await kept('fresh')).toEqual(before);
      await until(async () => (await kept('fresh')).states[0] !== before.states[0]);
    } finally {
      await moves.stop();
    }
    clock = now();
    expect(await kept('fresh')).toEqual({
      states: [at(24, clock, 2), at(168, clock, 3)],
      rows: ['24 test_a 2', '24 test_b 1', '168 test_a 2', '168 test_b 1', '168 test_old 1'],
    });
    expect(errors).toEqual([]);
  });
});
