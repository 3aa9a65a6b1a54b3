// Seeds a database for the read benchmarks with direct bulk SQL through Kysely (never through HTTP):
// a main repository (200k test cases, 5M results at scale 1) and a second repository of another
// organization (a tenth of that). The seeded database is kept and reused by later runs with the same
// parameters and the same migrations (SQLite file under the cache dir, PostgreSQL schema
// `seed_<key>` in the database `mainline_bench`). Two shapes of history: `spread` (the results of
// 30 days, 10 shards per CI run) and `day` (all of them uploaded within the last day, in 5,000-case
// reports, 3% of the tests flaky and failing half of their first attempts with stack traces that
// differ only in numbers, hex and paths); each is cached on its own.
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Insertable, type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { ensureRepository } from '../src/app/repositories.ts';
import { createToken } from '../src/app/tokens.ts';
import type { Queryable } from '../src/db/bulk.ts';
import { type Database, openDatabase } from '../src/db/database.ts';
import { failureFingerprint, summariseFailure } from '../src/domain/failures/index.ts';
import { repoFullName, testCaseId } from '../src/domain/testid/index.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import type { Tables, TestCasesTable, TestResultsTable, UploadsTable } from '../src/store/schema.ts';
import { findOrgBySlug } from '../src/store/tenancy/orgs.ts';
import type { TestCaseRow } from '../src/store/tests/cases.ts';
import { addOwners } from '../src/store/tests/owners.ts';
import { addUploadDays, foldPendingUploads } from '../src/store/uploads/duration-writes.ts';
import { failureTextHash } from '../src/store/uploads/failure-texts.ts';
import { encodePasses, type PassEntry } from '../src/store/uploads/pass-codec.ts';
import { countPasses, insertUploadPasses, PassBlobs, passCounts } from '../src/store/uploads/passes.ts';
import { rebuildRollups } from '../src/store/uploads/rollups-write.ts';
import { storedAttempts } from '../src/store/uploads/upload-attempts.ts';
import { type Engine, log, type Params, pgUrl, prng, ROOT } from './common.ts';

/** Bump when the generated data changes shape, so cached databases are seeded again. */
const SEED_VERSION = 8;
const DAY_MS = 24 * 3_600_000;
/** Distinct failure messages (fingerprints and summaries) results draw from. */
const FAILURE_KINDS = 300;
/** Tests are split into this many shards; each CI run (upload) runs one shard plus the smoke tests. */
const SHARDS = 10;
/** One test in this many is a smoke test that runs in every upload. */
const SMOKE_EVERY = 100;
/** Uploads per transaction while seeding results. */
const RUNS_PER_TRANSACTION = 20;

/** How the seeded history is laid out in time (see the top of this file). */
export type Shape = 'spread' | 'day';

/** What differs between the shapes. */
interface ShapeSpec {
  /** Milliseconds of history (the day shape's ends 20 minutes before seeding, the spread's at it). */
  readonly span: number;
  /** Shards of the suite; each upload runs one plus the smoke tests. */
  readonly shards: number;
  /** Chance of a FLAKY test, of a BROKEN one; per-mille chance of a flaky test's first attempt failing. */
  readonly flaky: number;
  readonly broken: number;
  readonly flakyFailPm: number;
  /** Texts of each failure kind that differ only in numbers, hex and paths (1: one text a kind). */
  readonly variants: number;
}

const SHAPES: Record<Shape, ShapeSpec> = {
  spread: { span: 30 * DAY_MS, shards: SHARDS, flaky: 0.05, broken: 0.02, flakyFailPm: 250, variants: 1 },
  day: { span: DAY_MS - 20 * 60_000, shards: 40, flaky: 0.03, broken: 0.02, flakyFailPm: 500, variants: 24 },
};

export interface RepoSpec {
  readonly orgSlug: string;
  readonly token: string;
  readonly repo: { readonly host: string; readonly owner: string; readonly name: string };
  readonly cases: number;
  readonly results: number;
  readonly seed: number;
}

export interface SeededRepo {
  readonly orgSlug: string;
  readonly token: string;
  readonly repo: RepoSpec['repo'];
  readonly repoId: string;
  readonly cases: number;
  readonly results: number;
  readonly failed: number;
  readonly flaky: number;
  readonly broken: number;
  /** A flaky smoke test: in every upload, so it has the most results and failures. */
  readonly hotTestId: string;
  readonly hotResults: number;
  /** Tests of one shard each, picked at random: a few dozen results, not in any cache. */
  readonly coldTestIds: string[];
}

export interface SeedMeta {
  readonly key: string;
  /** Undefined in seeds of older bench versions: spread. */
  readonly shape?: Shape;
  readonly migrations: Record<string, string>;
  readonly seededAt: number;
  readonly seedSeconds: number;
  readonly main: SeededRepo;
  readonly other: SeededRepo;
}

export interface Seeded {
  readonly engine: Engine;
  readonly location: { dataDir: string } | { databaseUrl: string };
  readonly meta: SeedMeta;
  /** True when an earlier run's database was reused. */
  readonly cached: boolean;
}

type BenchTables = {
  bench_seed_tests: {
    idx: number;
    id: string;
    shard: number;
    fail_pm: number;
    skip_pm: number;
    fp_base: number;
    quarantined: number;
    flaky: number;
  };
  bench_seed_failures: { idx: number; fingerprint: string; summary: string; text_hash: string };
  bench_seed_meta: { meta: string };
};

type SeedDb = Kysely<Tables & BenchTables>;

export const MAIN_SPEC = (params: Params, shape: Shape = 'spread'): RepoSpec => ({
  orgSlug: 'bench',
  token: 'ml_bench_main_token_0123456789abcdef',
  repo: { host: 'github.com', owner: 'acme', name: 'web' },
  cases: shape === 'day' ? params.dayCases : params.readCases,
  results: shape === 'day' ? params.dayResults : params.readResults,
  seed: 1,
});

export const OTHER_SPEC = (params: Params, shape: Shape = 'spread'): RepoSpec => ({
  orgSlug: 'bench-other',
  token: 'ml_bench_other_token_0123456789abcdef',
  repo: { host: 'github.com', owner: 'globex', name: 'api' },
  cases: shape === 'day' ? Math.round(params.dayCases / 10) : params.otherCases,
  results: shape === 'day' ? Math.round(params.dayResults / 10) : params.otherResults,
  seed: 2,
});

/** Identifies the seeded data: its shape and size. The schema is checked separately (migrationHashes). */
function seedKey(params: Params, shape: Shape): string {
  const main = MAIN_SPEC(params, shape);
  const other = OTHER_SPEC(params, shape);
  const input = JSON.stringify({
    v: SEED_VERSION,
    main: [main.cases, main.results],
    other: [other.cases, other.results],
    // The spread shape's key is what it was before there were shapes (its cached seeds stay valid).
    ...(shape === 'spread' ? {} : { shape, spec: SHAPES[shape] }),
  });
  return createHash('sha256').update(input).digest('hex').slice(0, 12);
}

/**
 * A hash of every migration file. A cached database stays usable when migrations were added since
 * it was seeded (the server applies them at start, as in production), not when one it ran changed.
 */
function migrationHashes(): Record<string, string> {
  const dir = path.join(ROOT, 'src', 'store', 'migrations');
  const out: Record<string, string> = {};
  // Recursive: frozen/ holds code old migrations run, so a change there counts as a changed migration.
  const files = fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => fs.statSync(path.join(dir, f)).isFile());
  for (const file of files.sort()) {
    out[file] = createHash('sha256')
      .update(fs.readFileSync(path.join(dir, file)))
      .digest('hex')
      .slice(0, 16);
  }
  return out;
}

async function adminQuery(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

async function readMeta(db: SeedDb): Promise<SeedMeta | undefined> {
  try {
    const row = await db.selectFrom('bench_seed_meta').select('meta').executeTakeFirst();
    return row === undefined ? undefined : (JSON.parse(row.meta) as SeedMeta);
  } catch {
    return undefined;
  }
}

/**
 * A failure message as a JavaScript test runner prints it: headline, then a stack. Variant v > 0 of
 * kind k differs from variant 0 only in numbers, hex and paths (a timeout's milliseconds, an
 * address, the runner's checkout folder, line numbers), as the same failure does from run to run.
 */
function failureText(k: number, v = 0): string {
  if (v === 0) {
    const kinds = [
      `AssertionError: expected ${k} to equal ${k + 1}`,
      `TimeoutError: waiting for selector "#item-${k}" failed: timeout 5000ms exceeded`,
      `TypeError: Cannot read properties of undefined (reading 'field${k}')`,
      `Error: connect ECONNREFUSED 127.0.0.1:${5000 + k}`,
      `Error: expect(received).toMatchSnapshot() — snapshot ${k} obsolete`,
    ];
    const frames = Array.from(
      { length: 8 + (k % 7) },
      (_, f) =>
        `    at fn${f} (/home/runner/work/web/web/packages/module-${k % 97}/src/lib/file_${f}.ts:${10 + f * k}:${5 + f})`,
    );
    return [kinds[k % kinds.length], ...frames].join('\n');
  }
  const hex = createHash('sha1').update(`${k}:${v}`).digest('hex');
  const kinds = [
    `AssertionError: expected ${v * 17 + 3} to equal ${v * 17 + 4} (object 0x${hex.slice(0, 12)})`,
    `TimeoutError: waiting for selector "#item-${k}" failed: timeout ${5000 + v * 250}ms exceeded`,
    `TypeError: Cannot read properties of undefined (reading 'field${k}') at 0x${hex.slice(0, 8)}`,
    `Error: connect ECONNREFUSED 10.0.${v}.${k % 250}:${5000 + v}`,
    `Error: snapshot file /tmp/jest_${hex.slice(0, 6)}/module-${k % 97}.snap is obsolete`,
  ];
  const frames = Array.from(
    { length: 8 + (k % 7) },
    (_, f) =>
      `    at fn${f} (/home/runner/work/_temp/${hex.slice(8, 16)}/web/packages/module-${k % 97}/src/lib/file_${f}.ts:${10 + f * k + v}:${5 + f})`,
  );
  return [kinds[k % kinds.length], ...frames].join('\n');
}

interface Run {
  idx: number;
  uploadId: string;
  at: number;
  branch: string;
  sha: string;
  pr: number | null;
  shard: number;
}

function plan(spec: RepoSpec, now: number, shape: ShapeSpec): Run[] {
  const rand = prng(spec.seed * 7919);
  const smoke = Math.ceil(spec.cases / SMOKE_EVERY);
  const shards = shape.shards;
  const perRun = smoke + (spec.cases - smoke) / shards;
  // Failed attempts of flaky tests are followed by a passing retry (about 1.3% more rows).
  const retried = shape === SHAPES.spread ? 1.013 : 1 + shape.flaky * (shape.flakyFailPm / 1000);
  const count = Math.max(shards, Math.round(spec.results / (perRun * retried)));
  const span = shape.span;
  // The spread shape keeps its old layout (30 days up to now); the day shape ends 20 minutes ago.
  const start = shape === SHAPES.spread ? now - 30 * DAY_MS : now - 20 * 60_000 - span;
  return Array.from({ length: count }, (_, idx) => {
    const onPr = rand() < 0.7;
    const pr = onPr ? 1000 + Math.floor(rand() * 1500) : null;
    return {
      idx,
      uploadId: randomUUID(),
      at: Math.round(start + ((idx + rand()) * span) / count),
      branch: pr === null ? 'main' : `feature/pr-${pr}`,
      sha: createHash('sha1').update(`${spec.seed}:${idx}`).digest('hex'),
      pr,
      shard: idx % shards,
    };
  });
}

const VERBS = ['renders', 'handles', 'rejects', 'parses', 'retries', 'caches', 'serializes', 'validates'];
const OBJECTS = [
  'an empty input',
  'the quoted header',
  'a large payload',
  'unicode names',
  "the user's session",
];

interface CasePlan {
  rows: Insertable<TestCasesTable>[];
  extra: BenchTables['bench_seed_tests'][];
  flaky: number;
  broken: number;
  hotTestId: string;
  coldTestIds: string[];
}

function planCases(spec: RepoSpec, repoId: string, runs: Run[], now: number, shape: ShapeSpec): CasePlan {
  const rand = prng(spec.seed);
  const fullName = repoFullName(spec.repo);
  const rows: Insertable<TestCasesTable>[] = [];
  const extra: BenchTables['bench_seed_tests'][] = [];
  const lastRunOfShard = new Map<number, number>();
  for (const r of runs) lastRunOfShard.set(r.shard, r.at);
  const lastRun = runs.at(-1)?.at ?? now;
  let flaky = 0;
  let broken = 0;
  let hotTestId = '';
  const cold: string[] = [];
  for (let i = 0; i < spec.cases; i++) {
    const module = i % 97;
    const feature = Math.floor(i / 20) % 50;
    const parent = `@acme/module-${module}`;
    const file = `packages/module-${module}/src/feature_${feature}.test.ts`;
    const classname = `Module${module}.Feature${feature}`;
    const name = `${VERBS[Math.floor(rand() * VERBS.length)]} ${OBJECTS[i % OBJECTS.length]} (case ${i})`;
    const id = testCaseId({ orgSlug: spec.orgSlug, repoFullName: fullName, file, classname, parent, name });
    const smoke = i % SMOKE_EVERY === 0;
    const shard = smoke ? -1 : i % shape.shards;
    const roll = rand();
    const status =
      i === 0 || roll < shape.flaky ? 'FLAKY' : roll < shape.flaky + shape.broken ? 'BROKEN' : 'HEALTHY';
    const unhealthy = status !== 'HEALTHY';
    if (status === 'FLAKY') flaky++;
    if (status === 'BROKEN') broken++;
    const prs =
      status === 'FLAKY'
        ? 1 + Math.floor(-Math.log(1 - rand()) * 5)
        : status === 'BROKEN'
          ? 1 + Math.floor(-Math.log(1 - rand()) * 2)
          : 0;
    const quarantined = status === 'FLAKY' && rand() < 0.4 ? 1 : 0;
    const statusAt = now - Math.floor(rand() * 30 * DAY_MS);
    const monitorType = status === 'FLAKY' ? 'pass_on_retry' : 'failure_rate';
    const reason =
      status === 'FLAKY'
        ? `Failed, then passed on retry on commit ${createHash('sha1').update(id).digest('hex').slice(0, 7)} (pass-on-retry)`
        : status === 'BROKEN'
          ? 'Failure rate 91.3% over the last 7 days is above 80% (failure rate, broken)'
          : 'No monitor has flagged this test';
    const ticket = unhealthy && rand() < 0.1 ? `WEB-${1000 + i}` : null;
    rows.push({
      id,
      repo_id: repoId,
      ordinal: i,
      name,
      parent,
      classname,
      file,
      variant: '',
      codeowners: JSON.stringify([`@acme/team-${module % 12}`]),
      status,
      status_reason: reason,
      status_at: statusAt,
      monitors: unhealthy
        ? JSON.stringify({
            [monitorType]: {
              kind: 'active',
              monitorType,
              detectionType: status.toLowerCase(),
              since: statusAt,
              lastEventAt: lastRun,
              reason,
            },
          })
        : '{}',
      has_active_monitor: unhealthy ? 1 : 0,
      manual_flag: null,
      quarantine_override: 'AUTO',
      quarantined,
      quarantine_setting: quarantined === 1 ? 'AUTO_QUARANTINE' : null,
      quarantined_at: quarantined === 1 ? statusAt : null,
      ticket_id: ticket,
      ticket_url: ticket === null ? null : `https://linear.app/acme/issue/${ticket}`,
      first_seen_at: now - 30 * DAY_MS,
      last_seen_at: smoke ? lastRun : (lastRunOfShard.get(shard) ?? lastRun),
      prs_impacted_7d: prs,
      rollup_at: now,
    });
    // Per-mille chances of a failed and of a skipped attempt; ~5% of all attempts fail overall.
    const failPm = status === 'FLAKY' ? shape.flakyFailPm : status === 'BROKEN' ? 900 : 18;
    extra.push({
      idx: i,
      id,
      shard,
      fail_pm: failPm,
      skip_pm: i % 37 === 0 ? 500 : 10,
      fp_base: (i * 7) % FAILURE_KINDS,
      quarantined,
      flaky: status === 'FLAKY' ? 1 : 0,
    });
    if (i === 0) hotTestId = id;
    else if (!smoke && cold.length < 1000 && rand() < 2000 / spec.cases) cold.push(id);
  }
  return { rows, extra, flaky, broken, hotTestId, coldTestIds: cold };
}

async function inChunks<T>(
  items: readonly T[],
  size: number,
  fn: (part: T[]) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await fn(items.slice(i, i + size));
}

/**
 * The SELECT list of one upload's results, column by column: tsc fails here when test_results
 * gains or loses a column. `x` is a seeded test with its per-upload hash `h`; `f` its failure.
 */
function resultColumns(repoId: string, run: Run, retry: boolean) {
  return {
    repo_id: sql`cast(${repoId} as text)`,
    test_case_id: sql`x.id`,
    upload_id: sql`cast(${run.uploadId} as text)`,
    at: sql`cast(${run.at} as bigint) + (x.idx % 900) * 1000 + ${retry ? 30_000 : 0}`,
    branch: sql`cast(${run.branch} as text)`,
    commit_sha: sql`cast(${run.sha} as text)`,
    pr_number: sql`cast(${run.pr} as integer)`,
    outcome: retry
      ? sql`'passed'`
      : sql`case when x.h < x.fail_pm then 'failed' when x.h < x.fail_pm + x.skip_pm then 'skipped' else 'passed' end`,
    retry_index: sql`${retry ? 1 : 0}`,
    duration_ms: sql`3 + (x.h * 37 + x.idx) % 2500`,
    failure_fingerprint: retry ? sql`null` : sql`f.fingerprint`,
    failure_summary: retry ? sql`null` : sql`f.summary`,
    failure_text_hash: retry ? sql`null` : sql`f.text_hash`,
    quarantined: sql`x.quarantined`,
  } satisfies Record<Exclude<keyof TestResultsTable, 'id'>, RawBuilder<unknown>>;
}

/**
 * One upload's attempts (retry: the passing retries of its failed flaky tests): failed and skipped
 * ones into test_results by INSERT … SELECT; the passes are returned (one upload_passes row holds
 * both kinds, see storeRunPasses).
 */
async function insertRun(
  trx: Transaction<Tables & BenchTables>,
  repoId: string,
  run: Run,
  retry: boolean,
  variants: number,
): Promise<PassEntry[]> {
  const columns = resultColumns(repoId, run, retry);
  const names = sql.raw(Object.keys(columns).join(', '));
  const hash = sql`(x0.idx * 7919 + ${run.idx} * 104729 + (x0.idx * ${run.idx}) % 9973) % 1000`;
  const tests = sql`select x0.*, ${hash} as h from bench_seed_tests x0 where x0.shard = ${run.shard} or x0.shard = -1`;
  const retried = sql`x.flaky = 1 and x.h < x.fail_pm`;
  if (!retry) {
    await sql`insert into test_results (${names})
      select ${sql.join(Object.values(columns))}
      from (${tests}) x
      left join bench_seed_failures f on x.h < x.fail_pm
        and f.idx = ((x.fp_base + x.h % 3) % ${FAILURE_KINDS}) * ${variants} + (x.idx + ${run.idx}) % ${variants}
      where x.h < x.fail_pm + x.skip_pm
      order by x.idx`.execute(trx);
  }
  const passed = retry ? retried : sql`x.h >= x.fail_pm + x.skip_pm`;
  const { rows } = await sql<{ ordinal: number; at: number; retry_index: number; duration_ms: number }>`
    select x.idx as ordinal, ${columns.at} as at, ${columns.retry_index} as retry_index,
      ${columns.duration_ms} as duration_ms
    from (${tests}) x
    where ${passed}`.execute(trx);
  return rows.map((r) => ({
    ordinal: Number(r.ordinal),
    at: Number(r.at),
    retryIndex: Number(r.retry_index),
    durationMs: Number(r.duration_ms),
  }));
}

async function seedRepo(
  base: Kysely<Tables>,
  engine: Engine,
  spec: RepoSpec,
  now: number,
  shape: ShapeSpec,
): Promise<SeededRepo> {
  const t0 = performance.now();
  const db: SeedDb = base.withTables<BenchTables>();
  const created = await createToken(base, { orgSlug: spec.orgSlug, name: 'bench', now, token: spec.token });
  const org = await findOrgBySlug(base, spec.orgSlug);
  if (org === undefined) throw new Error(`organization ${spec.orgSlug} missing after createToken`);
  const caller = { tokenId: created.id, tokenName: 'bench', orgId: org.id, orgSlug: spec.orgSlug };
  const { repository } = await ensureRepository(base, caller, spec.repo, now - 31 * DAY_MS);
  const runs = plan(spec, now, shape);
  const cases = planCases(spec, repository.id, runs, now, shape);

  await db.deleteFrom('bench_seed_tests').execute();
  await db.transaction().execute(async (trx) => {
    await inChunks(cases.rows, 1000, (part) => trx.insertInto('test_cases').values(part).execute());
    // The owner index (migration 0032), as ingestion writes it with the rows.
    await addOwners(trx as unknown as Queryable, cases.rows as TestCaseRow[]);
    await trx
      .updateTable('repositories')
      .set({ test_ordinals: cases.rows.length })
      .where('id', '=', repository.id)
      .execute();
    await inChunks(cases.extra, 4000, (part) => trx.insertInto('bench_seed_tests').values(part).execute());
    const uploads: Insertable<UploadsTable>[] = runs.map((r) => ({
      id: r.uploadId,
      repo_id: repository.id,
      upload_key: null,
      source: 'multipart',
      branch: r.branch,
      commit_sha: r.sha,
      pr_number: r.pr,
      job_name: `test (shard ${r.shard + 1}/${shape.shards})`,
      job_url: `https://github.com/${spec.repo.owner}/${spec.repo.name}/actions/runs/${9_000_000 + r.idx}`,
      variant: '',
      created_at: r.at,
      result: '{}',
    }));
    await inChunks(uploads, 500, (part) => trx.insertInto('uploads').values(part).execute());
  });
  log(`seed ${engine}: ${spec.orgSlug}: ${cases.rows.length} test cases, ${runs.length} uploads`);

  for (let i = 0; i < runs.length; i += RUNS_PER_TRANSACTION) {
    await db.transaction().execute(async (trx) => {
      if (engine === 'postgres') await sql`set local synchronous_commit = off`.execute(trx);
      for (const run of runs.slice(i, i + RUNS_PER_TRANSACTION)) {
        const passes = [
          ...(await insertRun(trx, repository.id, run, false, shape.variants)),
          ...(await insertRun(trx, repository.id, run, true, shape.variants)),
        ];
        await insertUploadPasses(trx as unknown as Queryable, {
          blobId: randomUUID(),
          uploadId: run.uploadId,
          repoId: repository.id,
          passes: encodePasses(passes),
        });
      }
    });
    log(
      `seed ${engine}: ${spec.orgSlug}: uploads ${Math.min(i + RUNS_PER_TRANSACTION, runs.length)}/${runs.length}`,
    );
  }

  // The seed writes results and pass blobs directly, not through ingest: the test-health rollups
  // (store/uploads/rollups.ts) that every read uses are built from them once, as migration 0018 does.
  await rebuildRollups(db as unknown as Queryable, repository.id);
  // Likewise the duration rows (store/uploads/duration-writes.ts): every upload listed for the means
  // and folded in by the same function the server runs, and its days added as ingest adds them.
  await fillDurations(db as unknown as Queryable, repository.id);

  const counts = await db
    .selectFrom('test_results')
    .select((eb) => [
      eb.fn.countAll<number>().as('n'),
      eb.fn.sum<number>(eb.case().when('outcome', '=', 'failed').then(1).else(0).end()).as('failed'),
    ])
    .where('repo_id', '=', repository.id)
    .executeTakeFirstOrThrow();
  const passes = await countPasses(db as unknown as Queryable, repository.id);
  const hotResults = await db
    .selectFrom('test_results')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('test_case_id', '=', cases.hotTestId)
    .executeTakeFirstOrThrow();
  // The hot test is the first (ordinal 0).
  const hotPasses = await passCounts(
    db as unknown as Queryable,
    new PassBlobs(0),
    repository.id,
    [{ id: cases.hotTestId, ordinal: 0 }],
    [0],
  );
  const hot = { n: Number(hotResults.n) + (hotPasses.get(cases.hotTestId)?.[0] ?? 0) };
  counts.n = Number(counts.n) + passes;
  log(
    `seed ${engine}: ${spec.orgSlug}: ${Number(counts.n)} results in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  return {
    orgSlug: spec.orgSlug,
    token: spec.token,
    repo: spec.repo,
    repoId: repository.id,
    cases: cases.rows.length,
    results: Number(counts.n),
    failed: Number(counts.failed),
    flaky: cases.flaky,
    broken: cases.broken,
    hotTestId: cases.hotTestId,
    hotResults: Number(hot.n),
    coldTestIds: cases.coldTestIds,
  };
}

/** The seeded uploads' duration means (folded as the server folds) and days (as ingest adds them). */
async function fillDurations(db: Queryable, repoId: string): Promise<void> {
  await sql`insert into duration_means_pending (repo_id, upload_id)
    select repo_id, id from uploads where repo_id = ${repoId}`.execute(db);
  const folded = await foldPendingUploads(db, repoId);
  const ids = await db.selectFrom('uploads').select('id').where('repo_id', '=', repoId).execute();
  for (let i = 0; i < ids.length; i += RUNS_PER_TRANSACTION)
    await db.transaction().execute(async (trx) => {
      for (const { id } of ids.slice(i, i + RUNS_PER_TRANSACTION)) {
        const stored = await storedAttempts(trx, id);
        if (stored !== undefined) await addUploadDays(trx, repoId, stored);
      }
    });
  log(`seed: ${repoId}: ${folded} uploads folded into the duration means and days`);
}

async function createSeedTables(db: SeedDb, engine: Engine, shape: ShapeSpec): Promise<void> {
  const unlogged = engine === 'postgres' ? sql`unlogged` : sql``;
  await sql`create ${unlogged} table bench_seed_tests (idx bigint not null, id text not null, shard bigint not null,
    fail_pm bigint not null, skip_pm bigint not null, fp_base bigint not null, quarantined bigint not null,
    flaky bigint not null)`.execute(db);
  await sql`create index bench_seed_tests_shard on bench_seed_tests (shard, idx)`.execute(db);
  await sql`create table bench_seed_failures (idx bigint primary key, fingerprint text not null,
    summary text not null, text_hash text not null)`.execute(db);
  const failures = Array.from({ length: FAILURE_KINDS * shape.variants }, (_, i) => {
    const k = Math.floor(i / shape.variants);
    const text = failureText(k, i % shape.variants);
    return {
      idx: i,
      fingerprint: failureFingerprint(text),
      summary: summariseFailure(text),
      text_hash: failureTextHash(text),
      text,
    };
  });
  await inChunks(failures, 500, (part) =>
    db
      .insertInto('bench_seed_failures')
      .values(part.map(({ text: _, ...f }) => f))
      .execute(),
  );
  await inChunks(failures, 500, (part) =>
    db
      .insertInto('failure_texts')
      .values(part.map((f) => ({ hash: f.text_hash, text: f.text, last_used_at: Date.now() })))
      .onConflict((oc) => oc.doNothing())
      .execute(),
  );
  await sql`create table bench_seed_meta (meta text not null)`.execute(db);
}

async function seedAll(
  database: Database,
  engine: Engine,
  params: Params,
  key: string,
  shape: Shape,
): Promise<SeedMeta> {
  const db = database.db.withTables<BenchTables>();
  const t0 = performance.now();
  if (engine === 'sqlite') {
    await sql`pragma cache_size = -1048576`.execute(db);
    await sql`pragma foreign_keys = off`.execute(db);
  }
  await createSeedTables(db, engine, SHAPES[shape]);
  const now = Date.now();
  const main = await seedRepo(database.db, engine, MAIN_SPEC(params, shape), now, SHAPES[shape]);
  const other = await seedRepo(database.db, engine, OTHER_SPEC(params, shape), now, SHAPES[shape]);
  await sql`drop table bench_seed_tests`.execute(db);
  await sql`drop table bench_seed_failures`.execute(db);
  if (engine === 'postgres') {
    log('seed postgres: vacuum analyze');
    await sql`vacuum analyze`.execute(db);
  } else {
    await sql`pragma foreign_keys = on`.execute(db);
    await sql`pragma wal_checkpoint(truncate)`.execute(db);
  }
  const meta: SeedMeta = {
    key,
    shape,
    migrations: migrationHashes(),
    seededAt: now,
    seedSeconds: (performance.now() - t0) / 1000,
    main,
    other,
  };
  await db
    .insertInto('bench_seed_meta')
    .values({ meta: JSON.stringify(meta) })
    .execute();
  return meta;
}

function fresh(meta: SeedMeta | undefined, key: string, params: Params): meta is SeedMeta {
  if (meta === undefined || meta.key !== key) return false;
  if (Date.now() - meta.seededAt > params.seedMaxAgeHours * 3_600_000) return false;
  const now = migrationHashes();
  return Object.entries(meta.migrations ?? {}).every(([file, hash]) => now[file] === hash);
}

/** The cache's name prefix of a shape's seeds (the spread shape's is what it was before shapes). */
const prefixOf = (shape: Shape) => (shape === 'spread' ? '' : `${shape}_`);

async function seededSqlite(params: Params, key: string, shape: Shape): Promise<Seeded> {
  const dataDir = path.join(params.cacheDir, `sqlite-${prefixOf(shape)}${key}`);
  if (fs.existsSync(path.join(dataDir, 'mainline.db'))) {
    const database = openDatabase({ databaseUrl: undefined, dataDir });
    const meta = await readMeta(database.db.withTables<BenchTables>());
    await database.close();
    if (fresh(meta, key, params)) return { engine: 'sqlite', location: { dataDir }, meta, cached: true };
  }
  // Older seeds of this shape are removed (a shape's name prefix ends in `_`, a key has none).
  const ofShape = (entry: string) =>
    shape === 'spread' ? /^sqlite-[0-9a-f]+$/.test(entry) : entry.startsWith(`sqlite-${prefixOf(shape)}`);
  for (const entry of fs.existsSync(params.cacheDir) ? fs.readdirSync(params.cacheDir) : []) {
    if (ofShape(entry)) fs.rmSync(path.join(params.cacheDir, entry), { recursive: true, force: true });
  }
  log(`seed sqlite: seeding ${dataDir}`);
  const database = openDatabase({ databaseUrl: undefined, dataDir });
  try {
    await migrateToLatest(database);
    const meta = await seedAll(database, 'sqlite', params, key, shape);
    return { engine: 'sqlite', location: { dataDir }, meta, cached: false };
  } finally {
    await database.close();
  }
}

async function seededPostgres(params: Params, key: string, shape: Shape): Promise<Seeded> {
  const schema = `seed_${prefixOf(shape)}${key}`;
  const databaseUrl = pgUrl(params.pgAdminUrl, schema);
  const exists = await adminQuery(pgUrl(params.pgAdminUrl), 'select 1 from pg_namespace where nspname = $1', [
    schema,
  ]);
  if (exists.rowCount === 1) {
    const database = openDatabase({ databaseUrl, dataDir: '', poolSize: 1 });
    const meta = await readMeta(database.db.withTables<BenchTables>());
    await database.close();
    if (fresh(meta, key, params))
      return { engine: 'postgres', location: { databaseUrl }, meta, cached: true };
  }
  const old = await adminQuery(
    pgUrl(params.pgAdminUrl),
    shape === 'spread'
      ? `select nspname from pg_namespace where nspname ~ '^seed_[0-9a-f]+$'`
      : `select nspname from pg_namespace where nspname like 'seed\\_${shape}\\_%'`,
  );
  for (const row of old.rows as { nspname: string }[]) {
    await adminQuery(pgUrl(params.pgAdminUrl), `drop schema "${row.nspname}" cascade`);
  }
  log(`seed postgres: seeding schema ${schema} of mainline_bench`);
  await adminQuery(pgUrl(params.pgAdminUrl), `create schema ${schema}`);
  const database = openDatabase({ databaseUrl, dataDir: '', poolSize: 2 });
  try {
    await migrateToLatest(database);
    const meta = await seedAll(database, 'postgres', params, key, shape);
    return { engine: 'postgres', location: { databaseUrl }, meta, cached: false };
  } finally {
    await database.close();
  }
}

/** The seeded database for this engine: reused when an earlier run left one with the same key. */
export function ensureSeeded(engine: Engine, params: Params, shape: Shape = 'spread'): Promise<Seeded> {
  const key = seedKey(params, shape);
  return engine === 'sqlite' ? seededSqlite(params, key, shape) : seededPostgres(params, key, shape);
}

/** Opens a seeded database (or a scratch copy of one) from the bench process. */
export function openSeeded(location: Seeded['location']): Database {
  return 'dataDir' in location
    ? openDatabase({ databaseUrl: undefined, dataDir: location.dataDir })
    : openDatabase({ databaseUrl: location.databaseUrl, dataDir: '', poolSize: 1 });
}

/**
 * Deletes list snapshots (the read benchmark creates them), so every run starts from the seeded
 * state. Returns how many snapshot rows there were.
 */
export async function clearSnapshots(seeded: Pick<Seeded, 'engine' | 'location'>): Promise<number> {
  const database = openSeeded(seeded.location);
  try {
    const { n } = await database.db
      .selectFrom('list_snapshot_rows')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    await database.db.deleteFrom('list_snapshot_rows').execute();
    await database.db.deleteFrom('list_snapshots').execute();
    if (seeded.engine === 'sqlite') await sql`pragma wal_checkpoint(truncate)`.execute(database.db);
    return Number(n);
  } finally {
    await database.close();
  }
}
