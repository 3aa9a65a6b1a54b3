// The dashboard's first views after new results arrive: each sample uploads one small JUnit report of
// the seeded main repository through the upload API (as bench/ingest.ts does), waits for its answer,
// then times ONE GET of the page. Every upload bumps the repository's health/read version, so the
// answers the server kept for the page are stale and the GET is the first view of the new data:
// what a user sees right after a CI job reports (the other dashboard rows repeat a page with no
// upload in between, so most of their requests are answered from the kept lists).
import fs from 'node:fs';
import path from 'node:path';
import { log, machineIdle, type Params } from './common.ts';
import { upload } from './ingest.ts';
import { escapeXml } from './junit-gen.ts';
import { type LoadResult, send } from './load.ts';
import type { SeededRepo } from './seed.ts';
import { type SequentialFigures, sequentialBudgetSeconds, sequentialFigures } from './sequential.ts';

/** Test cases of each upload, samples per row at most (fewer with a smaller BENCH_SEQUENTIAL). */
export const CASES = 50;
const SAMPLES = 100;
/** Samples of each row before the measured ones (uploaded and requested, not counted). */
export const WARMUP = 3;
/** One test in this many fails in each upload (a different set each time), with a new message. */
export const FAIL_EVERY = 10;
/** The end of the names of these rows. */
export const AFTER_UPLOAD = ', after each upload';

/** A seeded test as its JUnit testcase names it. */
interface Identity {
  readonly id: string;
  readonly name: string;
  readonly parent: string;
  readonly classname: string;
  readonly file: string;
}

/** Up to CASES seeded tests of `main` (its cold tests), their identities read through the API. */
async function identities(base: string, main: SeededRepo): Promise<Identity[]> {
  const headers = { 'content-type': 'application/json', 'x-api-token': main.token };
  const out: Identity[] = [];
  for (const id of main.coldTestIds.slice(0, CASES)) {
    const res = await send(
      `${base}/v1/flaky-tests/get-test-details`,
      'POST',
      headers,
      JSON.stringify({ repo: main.repo, org_url_slug: main.orgSlug, test_id: id }),
    );
    if (res.status !== 200)
      throw new Error(`get-test-details answered ${res.status}: ${res.text.slice(0, 300)}`);
    const t = (
      JSON.parse(res.text) as {
        test: { name: string; parent?: string; classname?: string; file_path?: string };
      }
    ).test;
    if (t.parent === undefined || t.classname === undefined || t.file_path === undefined)
      throw new Error(`seeded test ${id} has no parent, classname or file`);
    out.push({ id, name: t.name, parent: t.parent, classname: t.classname, file: t.file_path });
  }
  if (out.length < FAIL_EVERY) throw new Error(`only ${out.length} cold tests to upload`);
  return out;
}

/** Letters g–z only (the failure fingerprint masks digits and hex): a word no other upload uses. */
function word(n: number): string {
  let s = '';
  for (let v = n + 20 ** 3; v > 0; v = Math.floor(v / 20)) s = String.fromCharCode(103 + (v % 20)) + s;
  return s;
}

/**
 * The JUnit report of upload number `n`: every test of `tests`, one in FAIL_EVERY failing (which ones
 * turns with n) with a message naming `word(n)`. The ids of the failing tests.
 */
function report(tests: readonly Identity[], n: number): { xml: string; failed: string[] } {
  const failed: string[] = [];
  const suites = new Map<string, string[]>();
  tests.forEach((t, k) => {
    const head = `<testcase name="${escapeXml(t.name)}" classname="${escapeXml(t.classname)}" file="${escapeXml(t.file)}" time="0.012"`;
    let xml = `${head}/>`;
    if ((k + n) % FAIL_EVERY === 0) {
      failed.push(t.id);
      const message = `TypeError: Cannot read properties of undefined (reading '${word(n)}')`;
      xml = `${head}><failure message="${escapeXml(message)}" type="TypeError">${escapeXml(`${message}\n    at run (/home/runner/work/web/web/${t.file}:12:5)`)}</failure></testcase>`;
    }
    const list = suites.get(t.parent) ?? [];
    list.push(xml);
    suites.set(t.parent, list);
  });
  const body = [...suites]
    .map(
      ([parent, cases]) =>
        `<testsuite name="${escapeXml(parent)}" tests="${cases.length}">\n${cases.join('\n')}\n</testsuite>`,
    )
    .join('\n');
  return { xml: `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n${body}\n</testsuites>\n`, failed };
}

/** A dashboard row: one-at-a-time figures only (no load run). */
export function pageResult(name: string, seq: SequentialFigures, failed: number): LoadResult {
  return { name, rps: Number.NaN, p50: Number.NaN, p99: Number.NaN, total: seq.n, failed, seq };
}

/** A page measured after each upload: its path, given the failing tests of the upload before it. */
export interface AfterUploadPage {
  readonly name: string;
  readonly path: (failed: readonly string[]) => string;
  /** Text the page must hold after upload number n (else the answer counts as failed: stale). */
  readonly shows?: (n: number) => string;
}

/**
 * Each page in turn: per sample, one upload of CASES seeded tests, then one timed GET (the timing
 * covers only the GET), within sequentialBudgetSeconds like the sequential loops (at least 20
 * samples). `failed`: non-2xx answers and pages without what they must show.
 */
export async function measureAfterUpload(
  base: string,
  main: SeededRepo,
  headers: Record<string, string>,
  pages: readonly AfterUploadPage[],
  params: Params,
): Promise<LoadResult[]> {
  const tests = await identities(base, main);
  const file = path.join(params.cacheDir, `after-upload-${process.pid}.xml`);
  fs.mkdirSync(params.cacheDir, { recursive: true });
  const n = Math.min(params.sequential, SAMPLES);
  const budgetMs = sequentialBudgetSeconds(params.duration) * 1000;
  let uploads = 0;
  const out: LoadResult[] = [];
  try {
    for (const p of pages) {
      await machineIdle(`reads: ${p.name}`);
      log(`reads: ${p.name} (${n} uploads of ${tests.length} test cases)`);
      const times: number[] = [];
      let failed = 0;
      let measuredFrom = Number.POSITIVE_INFINITY;
      for (let i = 0; times.length < n; i++) {
        const warming = i < WARMUP;
        if (!warming && measuredFrom === Number.POSITIVE_INFINITY) measuredFrom = performance.now();
        if (!warming && times.length >= Math.min(n, 20) && performance.now() - measuredFrom > budgetMs) break;
        const u = uploads++;
        const r = report(tests, u);
        fs.writeFileSync(file, r.xml);
        const answer = await upload(base, main.token, file, u.toString(16).padStart(40, 'a'), main.repo);
        if (answer.counts?.test_cases !== tests.length)
          throw new Error(`upload counted ${answer.counts?.test_cases} test cases, expected ${tests.length}`);
        // The upload's failures must be the seeded tests' (same identities, same ids).
        const ids = (answer as { failed_tests?: { test_case_id: string }[] }).failed_tests?.map(
          (f) => f.test_case_id,
        );
        if (ids?.sort().join() !== [...r.failed].sort().join())
          throw new Error(`the upload's failed tests are ${ids?.join()}, expected ${r.failed.join()}`);
        const t0 = performance.now();
        const res = await send(base + p.path(r.failed), 'GET', headers);
        const elapsed = performance.now() - t0;
        if (warming) continue;
        times.push(elapsed);
        if (res.status < 200 || res.status > 299) failed++;
        else if (p.shows !== undefined && !res.text.includes(p.shows(u))) {
          if (failed === 0) log(`WARNING: ${p.name}: the page does not show upload ${u}'s failure`);
          failed++;
        }
      }
      out.push(pageResult(p.name, sequentialFigures(times), failed));
    }
  } finally {
    fs.rmSync(file, { force: true });
  }
  return out;
}

/** The failure text upload number n gives its failing tests (for AfterUploadPage.shows). */
export function uploadedFailure(n: number): string {
  return word(n);
}
