// The runner's persistence per merge-queue event with BENCH_PERSIST_PRS (default 1000) PRs queued
// (single mode, concurrency 25), on a real database: SQLite file, or PostgreSQL when DATABASE_URL is set.
// Each event goes through applyEvent (src/app/queue/apply.ts: header row + the rows a step changed, the
// parsed state reused by version); each round's events are then replayed, on an identical state in a
// database of its own, the way they were stored before issue 26 (one JSON row: read, parse, step,
// serialise, write), so the ratio is taken under the same load. The engine's own step() + pruneHistory() time on the same state is measured apart and
// taken off both: persistence = the event's whole time − the engine's; its CPU time (the process's user +
// system time, less the engine's) is printed beside it, as the wall clock on a shared machine is mostly
// waiting for a core. Commit ids are 40 hex digits in no order, as a forge's are (they are indexed).
// Each round starts with a tick reported apart: the first write after the pause (see below).
// Prints a markdown table.
//   node --expose-gc --import tsx bench/queue-persist.ts   (BENCH_PERSIST_ROUNDS, default 60 rounds of 5–30 events;
//   BENCH_PERSIST_SPARSE=1: PR numbers 40,000 + 7n; BENCH_PERSIST_FAIL_EVERY=1: every round's head fails)
import { createHash } from 'node:crypto';
import os from 'node:os';
import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { applyEvent, rowChanges } from '../src/app/queue/apply.ts';
import { QueueStateCache } from '../src/app/queue/state-cache.ts';
import { QueueStepListeners } from '../src/app/queue/step-listeners.ts';
import { EndpointPresence } from '../src/app/webhooks-out/endpoints.ts';
import {
  createQueueState,
  type PrEntry,
  pruneHistory,
  type QueueAction,
  type QueueEvent,
  type QueueState,
  queueStateFromJson,
  step,
} from '../src/domain/queue/index.ts';
import { IntMap } from '../src/lib/int-map.ts';
import { archive } from '../src/store/queue/archive.ts';
import { insertActions, saveQueueState } from '../src/store/queue/queues.ts';
import type { Tables } from '../src/store/schema.ts';
import { createTestDatabase } from '../test/support/database.ts';
import { forgePrNumber } from './queue-sim.ts';

const PRS = Number(process.env['BENCH_PERSIST_PRS'] ?? 1000);
const ROUNDS = Number(process.env['BENCH_PERSIST_ROUNDS'] ?? 60);
const CHECK = 'ci';
/**
 * BENCH_PERSIST_SPARSE=1 numbers the n-th PR 40,000 + 7n, as a busy forge's open PRs are numbered, instead
 * of n: V8 keeps a PR map with integer keys that sparse as a dictionary (docs/benchmarks-queue.md).
 */
const SPARSE = process.env['BENCH_PERSIST_SPARSE'] === '1';
/** BENCH_PERSIST_WHOLE=0 leaves out the one-JSON-row baseline. */
const WHOLE = process.env['BENCH_PERSIST_WHOLE'] !== '0';
/** BENCH_PERSIST_FAIL_EVERY=n: the head fails in every n-th round (default 5; 1 for a sample of failing heads). */
const FAIL_EVERY = Math.max(1, Number(process.env['BENCH_PERSIST_FAIL_EVERY'] ?? 5));
const SETTLE_MS = 300;
const FIRST = 'tick, first write after the pause';
const SPIN_MS = 20;

/** Keeps the CPU busy for `ms`. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}
const T0 = Date.UTC(2026, 0, 5, 9);
/** A commit id as a forge gives it (40 hex digits, in no order), named by `name`. */
const sha = (name: string) => createHash('sha1').update(name).digest('hex');

function submitted(nth: number): QueueEvent {
  const n = SPARSE ? forgePrNumber(nth) : nth;
  return {
    type: 'pr_submitted',
    pr: {
      number: n,
      title: `PR ${n}`,
      author: 'dev',
      headSha: sha(`pr${n}-head`),
      baseSha: sha('main-0'),
      baseBranch: 'main',
      mergeability: 'mergeable',
    },
    checks: [{ name: CHECK, outcome: 'passed' }],
  };
}

/** Test branches built at once: the state a runner leaves after carrying out the actions. */
function built(actions: readonly QueueAction[]): QueueEvent[] {
  return actions.flatMap((a) =>
    a.type === 'create_test_run'
      ? [{ type: 'test_branch_built', runId: a.runId, sha: sha(`sha-${a.runId}`) } as const]
      : [],
  );
}

function queued(count: number): QueueState {
  let s = createQueueState({ branch: 'main', targetHead: sha('main-0'), idSeed: 'run', concurrency: 25 });
  const drive = (ev: QueueEvent) => {
    const out = step(s, ev, T0);
    s = pruneHistory(out.state).state;
    for (const b of built(out.actions)) s = pruneHistory(step(s, b, T0).state).state;
  };
  drive({ type: 'required_statuses_discovered', serviceConfig: null, branchProtection: [CHECK] });
  for (let n = 1; n <= count; n += 1) drive(submitted(n));
  return s;
}

/** The way before issue 26: the whole state as one JSON row, read, parsed, stepped, serialised, written. */
async function wholeRowApply(db: Kysely<Tables>, queueId: string, event: QueueEvent, now: number) {
  return db.transaction().execute(async (trx) => {
    const locked = sql<{
      state: string;
      version: number;
    }>`select state, version from bench_whole_state where id = ${queueId}${
      db.getExecutor().adapter instanceof PostgresAdapter ? sql` for update` : sql``
    }`;
    const row = (await locked.execute(trx)).rows[0];
    if (row === undefined) throw new Error('no whole-state row');
    const before = queueStateFromJson(row.state);
    const stepped = step(before, event, now);
    const pruned = pruneHistory(stepped.state);
    await sql`update bench_whole_state set state = ${JSON.stringify(pruned.state)}, version = ${row.version + 1} where id = ${queueId} and version = ${row.version}`.execute(
      trx,
    );
    await archive(trx, queueId, pruned.prs, pruned.runs, now);
    await insertActions(
      trx,
      queueId,
      stepped.actions.map((a) => JSON.stringify(a)),
      now,
    );
    return { state: pruned.state, actions: stepped.actions };
  });
}

const micros = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1000;
const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number);

interface Samples {
  engine: number[];
  rows: number[];
  /**
   * The process's CPU time (user + system, every thread: SQLite runs on this one) of the event − the
   * engine's: what waiting for a core leaves out. (The per-thread clock counts whole ticks here.)
   */
  cpu: number[];
  whole: number[];
}

const testDb = await createTestDatabase();
const db = testDb.database.db;
// The baseline's database of its own: its 700 KiB rows would otherwise grow the WAL the rows way writes to.
const wholeDb = await createTestDatabase();
const engineName = testDb.database.engine === 'postgres' ? 'PostgreSQL' : 'SQLite';
try {
  const now = T0 + 60_000;
  const built0 = performance.now();
  const start = queued(PRS);
  const testing = start.prs.values().filter((e) => e.state === 'testing').length;
  const buildMs = Math.round(performance.now() - built0);

  const queueId = 'queue';
  const empty = { ...start, prs: new IntMap<PrEntry>(), runs: {} };
  for (const target of [db, wholeDb.database.db]) {
    await target.insertInto('organizations').values({ id: 'org', slug: 'acme', created_at: T0 }).execute();
    await target
      .insertInto('repositories')
      .values({
        id: 'repo',
        org_id: 'org',
        host: 'git.local',
        owner: 'acme',
        name: 'bench',
        host_key: 'git.local',
        owner_key: 'acme',
        name_key: 'bench',
        created_at: T0,
      })
      .execute();
    await target
      .insertInto('merge_queues')
      .values({
        id: queueId,
        repo_id: 'repo',
        branch: 'main',
        header: JSON.stringify(empty),
        version: 0,
        created_at: T0,
        updated_at: T0,
        wake_at: null,
        lease_owner: null,
        lease_until: null,
      })
      .execute();
  }
  await saveQueueState(
    db,
    queueId,
    0,
    { header: JSON.stringify(empty), wake_at: null, updated_at: T0 },
    rowChanges(empty, start, 0),
  );
  const wholeHandle = wholeDb.database.db;
  await sql`create table bench_whole_state (id text primary key, state text not null, version integer not null)`.execute(
    wholeHandle,
  );
  await sql`insert into bench_whole_state (id, state, version) values (${queueId}, ${JSON.stringify(start)}, 0)`.execute(
    wholeHandle,
  );
  const stateKiB = Math.round(JSON.stringify(start).length / 1024);

  const byKind = new Map<string, Samples>();
  const cache = new QueueStateCache(16);
  // The app's caches a queue step uses (app/caches.ts): the parsed states, the step listeners, and what
  // the process knows of the organization's webhook endpoints (none here).
  const queues = {
    db,
    caches: {
      queueStates: cache,
      queueSteps: new QueueStepListeners(),
      webhookEndpoints: new EndpointPresence(),
    },
  };
  let version = 1;
  let next = PRS + 1;
  let merges = 0;
  /** This round's events in order, replayed on the one-row baseline once the round is done. */
  let round: { kind: string; event: QueueEvent; engine: number; rows: number; cpu: number }[] = [];
  /** One event the rows way, with the engine's share timed on the held state; answers its actions. */
  const timed = async (kind: string, event: QueueEvent): Promise<QueueAction[]> => {
    const held = cache.get(queueId, version);
    let engine = Number.NaN;
    if (held !== undefined) {
      const t0 = process.hrtime.bigint();
      pruneHistory(step(held, event, now).state);
      engine = micros(t0);
    }
    const cpu0 = process.cpuUsage();
    const t1 = process.hrtime.bigint();
    const out = await applyEvent(queues, queueId, event, now);
    const rows = micros(t1);
    const cpu = process.cpuUsage(cpu0);
    round.push({ kind, event, engine, rows, cpu: cpu.user + cpu.system });
    version += 1;
    return out.actions;
  };
  const buildAll = async (actions: QueueAction[]) => {
    for (const ev of built(actions)) await timed('test_branch_built', ev);
  };
  /**
   * The round's events again on the baseline, right after (same moment, same states). Garbage left by
   * either way is collected between the two when the process runs with --expose-gc, and the baseline's
   * writes are given time to reach the disk, so neither pays for the other's work.
   */
  const gc = (globalThis as { gc?: () => void }).gc;
  const replay = async (record: boolean) => {
    gc?.();
    const wholeTimes: number[] = [];
    for (const e of round) {
      const t0 = process.hrtime.bigint();
      if (WHOLE) await wholeRowApply(wholeHandle, queueId, e.event, now);
      wholeTimes.push(micros(t0));
    }
    gc?.();
    // The baseline wrote megabytes to its database: let its WAL checkpoint and the disk settle first.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    // Back on the CPU before the next round: on a loaded machine the first event after the pause
    // would otherwise be charged the wait for a core (tens of ms at load 15 on 2 cores).
    spin(SPIN_MS);
    if (record) {
      round.forEach((e, i) => {
        if (Number.isNaN(e.engine)) return;
        const s = byKind.get(e.kind) ?? { engine: [], rows: [], cpu: [], whole: [] };
        s.engine.push(e.engine);
        s.rows.push(e.rows - e.engine);
        s.cpu.push(e.cpu - e.engine);
        s.whole.push((wholeTimes[i] as number) - e.engine);
        byKind.set(e.kind, s);
      });
    }
    round = [];
  };

  // The first event reads the rows (nothing held yet); every later one starts from the held state.
  await timed('tick', { type: 'tick' });
  await replay(false);
  const warmup = Math.max(3, Math.floor(ROUNDS / 10));
  for (let r = 0; r < warmup + ROUNDS; r += 1) {
    // The round's first write after the pause restarts SQLite's WAL (the checkpoint thread copied it
    // all back meanwhile), and SQLite syncs the WAL's new header before writing to it: one fsync,
    // ~1 ms on a quiet disk and tens under load. A tick takes it, apart, so each kind's figures are
    // its own (before, the passing head's ci_reported, always first, paid it: 18-33 ms medians).
    await buildAll(await timed(FIRST, { type: 'tick' }));
    const held = cache.get(queueId, version);
    if (held === undefined) throw new Error('bench: no state held for the current version');
    const head = held.order[0];
    const runId = head === undefined ? null : (held.prs.get(head)?.runId ?? null);
    if (head === undefined || runId === null) throw new Error('bench: the head PR is not testing');
    const fails = r % FAIL_EVERY === FAIL_EVERY - 1;
    const reported = await timed(fails ? 'ci_reported (head fails)' : 'ci_reported (head passes)', {
      type: 'ci_reported',
      runId,
      checks: [{ name: CHECK, outcome: fails ? 'failed' : 'passed' }],
    });
    await buildAll(reported);
    const merge = reported.find((a) => a.type === 'merge_pr');
    if (merge !== undefined && merge.type === 'merge_pr') {
      merges += 1;
      await buildAll(
        await timed('merge_succeeded', {
          type: 'merge_succeeded',
          prNumber: merge.prNumber,
          newTargetSha: sha(`main-${merges}`),
        }),
      );
    }
    await buildAll(await timed('pr_submitted', submitted(next++)));
    await buildAll(await timed('tick', { type: 'tick' }));
    await replay(r >= warmup);
  }

  const load = os.loadavg().map((x) => x.toFixed(1));
  const lines = [
    `Merge-queue persistence per event, ${engineName}: ${PRS} PRs queued, ${testing} testing (single, concurrency 25; built in ${buildMs} ms), ${ROUNDS} rounds after ${warmup} warm-up; whole state ${stateKiB} KiB of JSON. Load average at the end ${load.join(' / ')} (${os.cpus().length} cores).`,
    '',
    'persistence = the event through the store − step() + pruneHistory() on the same state; "rows": applyEvent (header + changed rows, parsed state reused by version), wall clock, and the process’s CPU time less the engine’s; "one JSON row": the way before issue 26, the same events replayed right after each round on an identical state.',
    '',
    '| engine | event | events | step + prune µs (median) | persistence µs, rows (median) | p99 | CPU µs (median) | persistence µs, one JSON row (median) | p99 | one row ÷ rows |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const all: Samples = { engine: [], rows: [], cpu: [], whole: [] };
  for (const [kind, s] of byKind) {
    for (const k of ['engine', 'rows', 'cpu', 'whole'] as const) {
      all[k].push(...s[k]);
      s[k].sort((a, b) => a - b);
    }
    lines.push(row(kind, s));
  }
  for (const k of ['engine', 'rows', 'cpu', 'whole'] as const) all[k].sort((a, b) => a - b);
  lines.push(row('**every event**', all));
  const median = percentile(all.rows, 0.5);
  lines.push(
    '',
    `Goal (issue 26): persistence ≤ 1 ms per event on SQLite: ${engineName === 'SQLite' ? (median <= 1000 ? `met (${Math.round(median)} µs median over every event)` : `not met (${Math.round(median)} µs median)`) : 'measured on SQLite only; this run is PostgreSQL'}.`,
  );
  console.log(lines.join('\n'));

  function row(kind: string, s: Samples): string {
    const r = (x: number) => Math.round(x);
    const ratio = percentile(s.whole, 0.5) / percentile(s.rows, 0.5);
    return `| ${engineName} | ${kind} | ${s.rows.length} | ${r(percentile(s.engine, 0.5))} | ${r(percentile(s.rows, 0.5))} | ${r(percentile(s.rows, 0.99))} | ${r(percentile(s.cpu, 0.5))} | ${r(percentile(s.whole, 0.5))} | ${r(percentile(s.whole, 0.99))} | ${ratio.toFixed(1)}× |`;
  }
} finally {
  await testDb.cleanup();
  await wholeDb.cleanup();
}
