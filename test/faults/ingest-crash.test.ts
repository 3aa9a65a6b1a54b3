import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { storedAttempts } from '../support/attempts.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/database.ts';
import { junitXml, multipart } from '../support/upload.ts';
import { ORG, post, randomInt, ServerProcess, serverEnv, TOKEN } from './support/cluster.ts';

/**
 * Crash safety of ingestion: many uploads in flight, the server SIGKILLed at a random moment, restarted on
 * the same database. An upload answered 200 must be stored whole; one that was not answered must be
 * stored whole or not at all, never in part. Runs on SQLite, or on PostgreSQL when DATABASE_URL is set.
 */

const REPOS = ['faults-a', 'faults-b', 'faults-c'].map((name) => ({ host: 'github.com', owner: ORG, name }));
const UPLOADS_PER_ROUND = 36;
const CLIENTS = 6;

interface PlannedUpload {
  readonly key: string;
  readonly repo: (typeof REPOS)[number];
  /** Every test of the upload has this classname, so its test cases and results can be counted. */
  readonly classname: string;
  readonly tests: number;
  readonly body: { payload: Buffer; contentType: string };
}

interface Ack {
  readonly uploadId: string;
  readonly attempts: number;
}

/** Sizes from a handful of tests to thousands (a few hundred milliseconds of work each). */
function sizeOf(i: number): number {
  if (i % 9 === 4) return 6000;
  if (i % 4 === 1) return 800;
  return randomInt(5, 60);
}

function plan(round: number): PlannedUpload[] {
  return Array.from({ length: UPLOADS_PER_ROUND }, (_, i) => {
    const key = `round${round}-upload${i}`;
    const classname = `faults.${key}`;
    const tests = sizeOf(i);
    const repo = REPOS[i % REPOS.length]!;
    const cases = Array.from({ length: tests }, (_, j) => ({
      name: `test_${j}`,
      classname,
      file: `src/${key}.test.ts`,
      fail: j % 97 === 3 ? `assertion ${j} failed` : (false as const),
    }));
    const meta = {
      repo,
      org_url_slug: ORG,
      branch: 'main',
      commit_sha: `${round.toString(16).padStart(8, '0')}${i.toString(16).padStart(32, '0')}`,
      upload_key: key,
    };
    return {
      key,
      repo,
      classname,
      tests,
      body: multipart(meta, [{ name: `${key}.xml`, content: junitXml(cases) }]),
    };
  });
}

function send(url: string, upload: PlannedUpload) {
  return fetch(`${url}/v1/test-results/upload`, {
    method: 'POST',
    headers: { 'x-api-token': TOKEN, 'content-type': upload.body.contentType },
    body: upload.body.payload,
    signal: AbortSignal.timeout(120_000),
  });
}

/** What the database holds of each planned upload, counted three ways. */
async function stored(database: Database, uploads: readonly PlannedUpload[]) {
  const db = database.db;
  const keys = uploads.map((u) => u.key);
  const rows = await db
    .selectFrom('uploads')
    .select(['id', 'upload_key'])
    .where('upload_key', 'in', keys)
    .execute();
  const attempts = await storedAttempts(db);
  const resultsByUpload = new Map<string, number>();
  for (const a of attempts) resultsByUpload.set(a.upload_id, (resultsByUpload.get(a.upload_id) ?? 0) + 1);
  const casesByClass = new Map(
    (
      await db
        .selectFrom('test_cases')
        .select(['classname', (eb) => eb.fn.countAll<number>().as('n')])
        .where(
          'classname',
          'in',
          uploads.map((u) => u.classname),
        )
        .groupBy('classname')
        .execute()
    ).map((r) => [r.classname, Number(r.n)]),
  );
  const classOf = new Map(
    (await db.selectFrom('test_cases').select(['id', 'classname']).execute()).map((r) => [r.id, r.classname]),
  );
  const resultsByClass = new Map<string | null, number>();
  for (const a of attempts) {
    const classname = classOf.get(a.test_case_id) ?? null;
    resultsByClass.set(classname, (resultsByClass.get(classname) ?? 0) + 1);
  }
  return uploads.map((u) => {
    const row = rows.find((r) => r.upload_key === u.key);
    return {
      key: u.key,
      expected: u.tests,
      uploadId: row?.id,
      results: row === undefined ? 0 : (resultsByUpload.get(row.id) ?? 0),
      testCases: casesByClass.get(u.classname) ?? 0,
      resultsOfItsTests: resultsByClass.get(u.classname) ?? 0,
    };
  });
}

type Stored = Awaited<ReturnType<typeof stored>>[number];

const complete = (s: Stored) =>
  s.uploadId !== undefined &&
  s.results === s.expected &&
  s.testCases === s.expected &&
  s.resultsOfItsTests === s.expected;
const absent = (s: Stored) => s.uploadId === undefined && s.testCases === 0 && s.resultsOfItsTests === 0;

async function orphanResults(database: Database): Promise<number> {
  const uploads = new Set((await database.db.selectFrom('uploads').select('id').execute()).map((u) => u.id));
  return (await storedAttempts(database.db)).filter((a) => !uploads.has(a.upload_id)).length;
}

describe(`crash during ingestion (${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  let db: TestDatabase;
  let server: ServerProcess;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    server = await ServerProcess.start('ingest', serverEnv(db.env));
  });
  afterAll(async () => {
    await server?.kill();
    await db?.cleanup();
  });

  // Kill points: after the first answer, a few answers in, and about a third of the way through;
  // each with a random delay on top, so the kill lands at a different moment of the stream every run.
  it.each([
    { round: 1, killAfterAcks: 1 },
    { round: 2, killAfterAcks: randomInt(3, 6) },
    { round: 3, killAfterAcks: randomInt(8, 12) },
  ])(
    'round $round: SIGKILL after $killAfterAcks answered uploads, restart, nothing partial',
    async ({ round, killAfterAcks }) => {
      const uploads = plan(round);
      const acked = new Map<string, Ack>();
      const refused: string[] = [];
      const jitterMs = randomInt(0, 40);
      let next = 0;
      let killed = false;
      let killRequested: () => void = () => {};
      const killNow = new Promise<void>((resolve) => {
        killRequested = resolve;
      });

      const url = server.url;
      const client = async () => {
        while (!killed && next < uploads.length) {
          const upload = uploads[next++]!;
          try {
            const res = await send(url, upload);
            const text = await res.text();
            if (res.status !== 200) {
              refused.push(`${upload.key}: ${res.status} ${text}`);
              continue;
            }
            const body = JSON.parse(text);
            acked.set(upload.key, { uploadId: body.upload_id, attempts: body.counts.attempts });
            if (acked.size >= killAfterAcks) killRequested();
          } catch {
            // the connection died with the server: this upload is unacknowledged
          }
        }
      };
      const clients = Array.from({ length: CLIENTS }, client);
      await Promise.race([killNow, Promise.all(clients)]);
      await new Promise((resolve) => setTimeout(resolve, jitterMs));
      killed = true;
      const inFlightAtKill = next - acked.size - refused.length;
      await server.kill();
      await Promise.all(clients);

      expect(refused, 'no upload is refused while the server is up').toEqual([]);
      expect(acked.size, 'the kill came mid-stream').toBeLessThan(uploads.length);
      expect(inFlightAtKill + acked.size).toBeGreaterThan(0);

      await server.start();

      // Every answered upload is stored whole, under the id it was answered with.
      const afterCrash = await stored(db.database, uploads);
      for (const s of afterCrash) {
        const ack = acked.get(s.key);
        if (ack !== undefined) {
          expect(s, `acknowledged upload ${s.key} is complete`).toMatchObject({
            uploadId: ack.uploadId,
            results: s.expected,
            testCases: s.expected,
            resultsOfItsTests: s.expected,
          });
          expect(ack.attempts).toBe(s.expected);
        } else {
          expect(
            complete(s) || absent(s),
            `unacknowledged upload ${s.key} is absent or complete: ${JSON.stringify(s)}`,
          ).toBe(true);
        }
      }
      expect(await orphanResults(db.database), 'no result row outside a stored upload').toBe(0);
      const unanswered = afterCrash.filter((s) => !acked.has(s.key));
      console.log(
        `round ${round}: killed ${jitterMs} ms after answer ${killAfterAcks}; ${acked.size} answered, ` +
          `${inFlightAtKill} in flight; of the ${unanswered.length} unanswered, ` +
          `${unanswered.filter(complete).length} were stored whole and ${unanswered.filter(absent).length} not at all`,
      );

      // Through the API: a repeated upload_key answers the stored upload, and the client's retries of the
      // unanswered ones are taken (or recognised, if they had committed before the kill).
      for (const upload of uploads) {
        const res = await send(server.url, upload);
        expect(res.status, upload.key).toBe(200);
        const body = (await res.json()) as { duplicate: boolean };
        const before = afterCrash.find((s) => s.key === upload.key)!;
        if (before.uploadId !== undefined) {
          expect(body, `${upload.key} is answered from the store`).toMatchObject({
            duplicate: true,
            upload_id: before.uploadId,
            counts: { attempts: upload.tests, test_cases: upload.tests },
          });
        } else {
          expect(body.duplicate, `${upload.key} was absent, so its retry is ingested`).toBe(false);
        }
      }
      const afterRetries = await stored(db.database, uploads);
      expect(afterRetries.filter((s) => !complete(s))).toEqual([]);
      expect(await orphanResults(db.database)).toBe(0);

      // The repositories' lists still read (the health rows written with each upload are consistent).
      for (const repo of REPOS) {
        const res = await post(server.url, '/v1/flaky-tests/list-unhealthy-tests', {
          repo,
          org_url_slug: ORG,
          status: 'FLAKY',
          page_query: { page_size: 10 },
        });
        expect(res.status, res.text).toBe(200);
      }
    },
  );
});
