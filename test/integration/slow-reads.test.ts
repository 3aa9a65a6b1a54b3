// get-test-details and list-failing-tests answer from JSON kept per process (health/read-answers.ts),
// by a key that holds the repository's read version (its health_version and oldest upload) and the
// hour their windows count from. A kept answer must never be one the database would not give now:
// after an upload (on this server or another one on the same database), after a retention pass at
// the same moment, when the hour moves on; and a kept first page must not hand out page tokens that
// expire sooner than a fresh answer's would.
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runHealthSweep } from '../../src/app/health/sweep.ts';
import { loadConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { buildApp } from '../../src/http/app.ts';
import { REPO, type TestApp } from '../support/app.ts';
import { storedTestId, storedTestsOf } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const scope = { repo: REPO, org_url_slug: 'acme' };

const START = Date.UTC(2026, 0, 1);
let clock = START;
beforeEach(() => {
  clock = START;
});
let other: { app: FastifyInstance; database: Database } | undefined;

/**
 * A fresh test app for every test of the enclosing describe block, whose clock starts at a whole
 * hour (2026-01-01 00:00 UTC) and moves only when told.
 */
function useReadsApp(env: Record<string, string> = {}) {
  const app = useTestApp({ env, now: () => clock, perTest: true });
  // Registered after the app's own hook, so the second server closes before the app's database does.
  afterEach(async () => {
    await other?.app.close();
    await other?.database.close();
    other = undefined;
  });
  const send = (sha: string, cases: { name: string; fail?: string | false }[], to: TestApp = app) =>
    upload(to, app.orgToken, [{ name: 'r.xml', content: junitXml(cases) }], { sha });
  const ask = async (url: string, body: object, via: FastifyInstance = app.app) => {
    const res = await via.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'x-api-token': app.orgToken },
      payload: JSON.stringify(body),
    });
    return res;
  };
  const details = async (id: string, via?: FastifyInstance) => {
    const res = await ask('/v1/flaky-tests/get-test-details', { ...scope, test_id: id }, via);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().test as {
      failure_rate_last_7d: number;
      failure_rate_last_24h: number;
      most_common_failures: { summary: string; occurrence_count: number }[];
    };
  };
  const failing = async (from: number, to: number, pageSize = 10, pageToken?: string) => {
    const res = await ask('/v1/flaky-tests/list-failing-tests', {
      ...scope,
      start_time: new Date(from).toISOString(),
      end_time: new Date(to).toISOString(),
      page_query: { page_size: pageSize, ...(pageToken !== undefined ? { page_token: pageToken } : {}) },
    });
    return res;
  };
  const idOf = (name: string) => storedTestId(app, name);
  return {
    app,
    start: START,
    send,
    ask,
    details,
    failing,
    idOf,
    sweep: () =>
      runHealthSweep({ db: app.db.database.db, config: app.config, now: () => clock, caches: app.caches }),
    at: (ms: number) => {
      clock = ms;
    },
  };
}

describe('kept answers of the rollup reads', () => {
  const s = useReadsApp();

  it('show an upload in the next answer, of this server and of another one on the same database', async () => {
    expect((await s.send('c1', [{ name: 'shaky', fail: 'boom' }, { name: 'steady' }])).statusCode).toBe(200);
    const id = await s.idOf('shaky');
    const config = loadConfig({ LOG_LEVEL: 'silent', MAINLINE_RATE_LIMIT: '0', ...s.app.db.env });
    const database = openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      ...(config.databaseUrl !== undefined ? { poolSize: 2 } : {}),
    });
    other = { app: await buildApp({ config, database, now: () => s.start }), database };
    // Both servers keep their answer.
    for (const via of [s.app.app, other.app]) {
      expect((await s.details(id, via)).failure_rate_last_7d).toBe(1);
      expect((await s.details(id, via)).failure_rate_last_7d).toBe(1);
    }
    const window = [s.start - HOUR, s.start + HOUR] as const;
    expect((await s.failing(...window)).json().tests.map((x: { name: string }) => x.name)).toEqual(['shaky']);

    expect((await s.send('c2', [{ name: 'shaky' }, { name: 'steady', fail: 'bang' }])).statusCode).toBe(200);
    for (const via of [s.app.app, other.app])
      expect((await s.details(id, via)).failure_rate_last_7d).toBe(0.5);
    const listed = (await s.failing(...window)).json().tests as {
      name: string;
      failure_rate_last_7d: number;
    }[];
    expect(listed.map((x) => [x.name, x.failure_rate_last_7d])).toEqual([
      ['shaky', 0.5],
      ['steady', 0.5],
    ]);
  });

  it('count from the hour holding now: a day later the 24-hour rate is 0 without any upload', async () => {
    expect((await s.send('c1', [{ name: 'shaky', fail: 'boom' }])).statusCode).toBe(200);
    const id = await s.idOf('shaky');
    s.at(s.start + 10 * MINUTE);
    expect(await s.details(id)).toMatchObject({ failure_rate_last_24h: 1, failure_rate_last_7d: 1 });
    s.at(s.start + 25 * HOUR);
    expect(await s.details(id)).toMatchObject({ failure_rate_last_24h: 0, failure_rate_last_7d: 1 });
    s.at(s.start + 8 * DAY);
    expect(await s.details(id)).toMatchObject({ failure_rate_last_24h: 0, failure_rate_last_7d: 0 });
    expect((await s.details(id)).most_common_failures).toHaveLength(1);
  });

  it('never hand out page tokens that expire sooner than a fresh answer’s', async () => {
    expect(
      (await s.send('c1', [{ name: 'a', fail: 'boom' }, { name: 'b', fail: 'bang' }, { name: 'c' }]))
        .statusCode,
    ).toBe(200);
    const window = [s.start, s.start + HOUR] as const;
    const firstPage = async () => {
      const res = await s.failing(...window, 1);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as {
        tests: { name: string }[];
        page: { next_page_token: string; total_rows: number };
      };
    };
    s.at(s.start + MINUTE);
    const first = await firstPage();
    expect(first.page.total_rows).toBe(2);
    const next = first.page.next_page_token;
    // Within half an hour the first page reuses its snapshot: the same tokens.
    s.at(s.start + 29 * MINUTE);
    expect((await firstPage()).page.next_page_token).toBe(next);
    const second = await s.failing(...window, 1, next);
    expect(second.statusCode, second.body).toBe(200);
    // A tampered token is refused although the true one's answer is kept.
    expect((await s.failing(...window, 1, `${next.slice(0, -2)}xx`)).statusCode).toBe(400);
    // After half an hour (same hour, same data) a first page takes a new snapshot.
    s.at(s.start + 32 * MINUTE);
    const later = await firstPage();
    expect(later.page.next_page_token).not.toBe(next);
    expect(later.tests).toEqual(first.tests);
    // An hour after the first snapshot its tokens expire, kept answer or not.
    s.at(s.start + 62 * MINUTE);
    expect((await s.failing(...window, 1, next)).statusCode).toBe(400);
    expect((await s.failing(...window, 1, later.page.next_page_token)).statusCode).toBe(200);
  });
});

describe('kept answers of the rollup reads, with MAINLINE_RETENTION_DAYS=30', () => {
  const s = useReadsApp({ MAINLINE_RETENTION_DAYS: '30' });

  it('show a retention pass in the next answer at the same moment', async () => {
    expect((await s.send('old', [{ name: 'shaky', fail: 'boom' }, { name: 'steady' }])).statusCode).toBe(200);
    s.at(s.start + 20 * DAY);
    expect((await s.send('newer', [{ name: 'shaky' }, { name: 'steady' }])).statusCode).toBe(200);
    const id = await s.idOf('shaky');
    // 30 days and half an hour later: the first upload is past the retention, and its failure is
    // still in the hour the 30-day failure groups start from.
    s.at(s.start + 30 * DAY + 30 * MINUTE);
    const firstDay = [s.start, s.start + DAY] as const;
    expect((await s.details(id)).most_common_failures.map((g) => g.summary)).toEqual(['boom']);
    expect((await s.failing(...firstDay)).json().tests).toHaveLength(1);
    expect(await s.sweep()).toMatchObject({ prunedUploads: 1 });
    expect((await s.details(id)).most_common_failures).toEqual([]);
    expect((await s.failing(...firstDay)).json().tests).toEqual([]);
  });
});

describe('kept pages of list-unhealthy-tests', () => {
  const s = useReadsApp();

  it('never hand out page tokens that expire sooner than a fresh answer’s', async () => {
    // Three tests fail then pass on one commit of a PR: all FLAKY.
    const names = ['a', 'b', 'c'];
    for (const fail of [true, false]) {
      const res = await upload(
        s.app,
        await s.app.token('acme'),
        [{ name: 'r.xml', content: junitXml(names.map((name) => ({ name, fail: fail && 'boom' }))) }],
        { sha: 's1', pr: 1, branch: 'pr-1' },
      );
      expect(res.statusCode).toBe(200);
    }
    const page = async (pageToken?: string) => {
      const res = await s.ask('/v1/flaky-tests/list-unhealthy-tests', {
        ...scope,
        status: 'FLAKY',
        page_query: { page_size: 2, ...(pageToken !== undefined ? { page_token: pageToken } : {}) },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as {
        tests: { name: string }[];
        page: { next_page_token: string; total_rows: number };
      };
    };
    s.at(s.start + MINUTE);
    const first = await page();
    expect(first.page.total_rows).toBe(3);
    s.at(s.start + 29 * MINUTE);
    expect((await page()).page.next_page_token).toBe(first.page.next_page_token);
    expect((await page(first.page.next_page_token)).tests).toHaveLength(1);
    s.at(s.start + 32 * MINUTE);
    const later = await page();
    expect(later.page.next_page_token).not.toBe(first.page.next_page_token);
    expect(later.tests).toEqual(first.tests);
  });
});

describe('getQuarantineConfig with remembered test ids', () => {
  const s = useReadsApp();

  it('tells apart identifiers whose fields run together the same, whichever is asked first', async () => {
    // Class name and file run together the same ('pkg/a.ts'); only the first test is quarantined.
    const cases = [
      { name: 't', classname: 'pk', file: 'g/a.ts' },
      { name: 't', classname: 'pkg/', file: 'a.ts' },
    ];
    expect((await s.send('c1', cases)).statusCode).toBe(200);
    const quarantinedId = (await storedTestsOf(s.app, REPO)).find((c) => c.classname === 'pk')?.id ?? '';
    expect(quarantinedId).not.toBe('');
    const set = await s.ask('/v1/flaky-tests/set-quarantine-override', {
      ...scope,
      test_id: quarantinedId,
      setting: 'ALWAYS_QUARANTINE',
    });
    expect(set.statusCode, set.body).toBe(200);
    const asked = async (identifiers: object[]) => {
      const res = await s.ask('/v1/metrics/getQuarantineConfig', {
        repo: REPO,
        orgUrlSlug: 'acme',
        testIdentifiers: identifiers,
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().testIds as string[];
    };
    const ab = { name: 't', className: 'pk', parentName: 'suite', file: 'g/a.ts' };
    const a = { name: 't', className: 'pkg/', parentName: 'suite', file: 'a.ts' };
    expect(await asked([ab])).toEqual([quarantinedId]);
    expect(await asked([a])).toEqual([]);
    expect(await asked([a, ab, { ...ab, variant: '' }])).toEqual([quarantinedId]);
    // By its id (any case) as well.
    expect(await asked([{ id: quarantinedId.toUpperCase() }, a])).toEqual([quarantinedId]);
  });
});
