import { chunked, insertMany, type Queryable } from '../../db/bulk.ts';
import type { PrEntry, PrHead, TestRun } from '../../domain/queue/index.ts';

// How archived runs are written (queue_archive.data, kind 'run'). A failing head supersedes the runs
// behind it, and the step archives them together: run k merges the heads of the k PRs ahead of it, so
// the same commit ids (64 bytes each with their PR number) were written again in every run, 28 of a
// failing head's 54 KB at 1,000 PRs queued. Now the run of the step with the most heads keeps them, and
// each other run whose heads are all among them, in its own order (its dependsOn, then its tested PRs),
// is written without them, naming that run in `prHeadsOf` (migration 0036). Readers here put them back;
// runs stored whole (before this, or whose heads differ) are read as they are.

/** An archived run as stored: whole, or without its heads and naming the run of its step that holds them. */
type StoredRun = Omit<TestRun, 'prHeads'> & { prHeads?: PrHead[]; prHeadsOf?: string };

/**
 * Whether the run's heads are, in order, its dependsOn then its tested PRs, each at the commit `shaOf`
 * gives for its number (also how app/queue/row-shape.ts tells a live run whose entries give its heads).
 */
export function headsInOrder(r: TestRun, shaOf: (n: number) => string | undefined): boolean {
  const heads = r.prHeads;
  const deps = r.dependsOn;
  if (heads.length !== deps.length + r.tested.length) return false;
  for (let i = 0; i < heads.length; i += 1) {
    const h = heads[i] as PrHead;
    const n = i < deps.length ? deps[i] : r.tested[i - deps.length];
    if (h.number !== n || shaOf(n) !== h.sha) return false;
  }
  return true;
}

/**
 * The JSON of runs archived together (in their order): the one with the most heads whole, every other
 * whose heads it holds without them (`prHeadsOf` its id). Pure, for the tests' row store too.
 */
export function archivedRunJson(runs: readonly TestRun[]): string[] {
  let holder: TestRun | undefined;
  for (const r of runs) if (holder === undefined || r.prHeads.length > holder.prHeads.length) holder = r;
  if (holder === undefined || runs.length < 2) return runs.map((r) => JSON.stringify(r));
  const shas = new Map<number, string>();
  for (const h of holder.prHeads) {
    // A PR twice among the holder's heads at two commits: no run refers to it (not expected).
    if (shas.has(h.number) && shas.get(h.number) !== h.sha) return runs.map((r) => JSON.stringify(r));
    shas.set(h.number, h.sha);
  }
  const of = holder.id;
  const shaOf = (n: number) => shas.get(n);
  return runs.map((r) => {
    if (r === holder || r.prHeads.length === 0 || !headsInOrder(r, shaOf)) return JSON.stringify(r);
    const { prHeads: _, ...rest } = r;
    return JSON.stringify({ ...rest, prHeadsOf: of });
  });
}

/**
 * Runs from their archived JSON, heads put back from the runs named in `prHeadsOf` (`holders`: their
 * JSON by id, as stored; those hold their heads). Pure, for the tests' row store too.
 */
export function runsFromArchive(texts: readonly string[], holders: ReadonlyMap<string, string>): TestRun[] {
  const heads = new Map<string, Map<number, string>>();
  const headsOf = (id: string): Map<number, string> => {
    let found = heads.get(id);
    if (found === undefined) {
      const text = holders.get(id);
      if (text === undefined)
        throw new Error(`archived run ${id}, which holds other runs' heads, is missing`);
      found = new Map((JSON.parse(text) as TestRun).prHeads.map((h) => [h.number, h.sha]));
      heads.set(id, found);
    }
    return found;
  };
  return texts.map((text) => {
    const r = JSON.parse(text) as StoredRun;
    const of = r.prHeadsOf;
    if (of === undefined) return r as TestRun;
    const shas = headsOf(of);
    const prHeads: PrHead[] = [];
    for (const n of [...r.dependsOn, ...r.tested]) prHeads.push({ number: n, sha: shas.get(n) as string });
    // In the place the engine's runs have them (after dependsOn), as a run archived whole reads.
    const run: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(r)) {
      if (key === 'prHeadsOf') continue;
      run[key] = value;
      if (key === 'dependsOn') run['prHeads'] = prHeads;
    }
    return run as unknown as TestRun;
  });
}

/** The runs named in `prHeadsOf` by these archived runs' JSON. */
function holdersNamed(texts: readonly string[]): string[] {
  const ids = new Set<string>();
  for (const text of texts) {
    // Only a run stored without its heads names one: most are read without parsing twice.
    if (!text.includes('"prHeadsOf"')) continue;
    const of = (JSON.parse(text) as StoredRun).prHeadsOf;
    if (of !== undefined) ids.add(of);
  }
  return [...ids];
}

/** Stores finished PR submissions and runs taken out of a queue's live state (idempotent). */
export async function archive(
  db: Queryable,
  queueId: string,
  prs: readonly PrEntry[],
  runs: readonly TestRun[],
  at: number,
): Promise<void> {
  const runJson = archivedRunJson(runs);
  const rows = [
    ...prs.map((e) => ({
      queue_id: queueId,
      kind: 'pr',
      key: e.id,
      pr_number: e.number,
      state: e.state,
      seq: e.seq,
      data: JSON.stringify(e),
      archived_at: at,
    })),
    ...runs.map((r, i) => ({
      queue_id: queueId,
      kind: 'run',
      key: r.id,
      pr_number: null,
      state: r.status,
      seq: null,
      data: runJson[i] as string,
      archived_at: at,
    })),
  ];
  // One multi-row statement (db/bulk.ts): a step that restarts the runs behind a failure archives dozens.
  await insertMany(db, 'queue_archive', rows, { ignoreConflicts: true });
}

/** The JSON of a queue's archived PR submissions or runs, to narrow down. */
function archived(db: Queryable, queueId: string, kind: 'pr' | 'run') {
  return db
    .selectFrom('queue_archive')
    .select('data')
    .where('queue_id', '=', queueId)
    .where('kind', '=', kind);
}

/** The latest archived submission of a PR. */
export async function archivedPr(
  db: Queryable,
  queueId: string,
  prNumber: number,
): Promise<PrEntry | undefined> {
  const row = await archived(db, queueId, 'pr')
    .where('pr_number', '=', prNumber)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : (JSON.parse(row.data) as PrEntry);
}

/** Archived submissions after sequence number `after`, in order, optionally only in one final state. */
export async function archivedPrs(
  db: Queryable,
  queueId: string,
  after: number,
  state: string | undefined,
  limit: number,
): Promise<PrEntry[]> {
  let query = archived(db, queueId, 'pr').where('seq', '>', after);
  if (state !== undefined) query = query.where('state', '=', state);
  const rows = await query.orderBy('seq').limit(limit).execute();
  return rows.map((r) => JSON.parse(r.data) as PrEntry);
}

export async function archivedRun(
  db: Queryable,
  queueId: string,
  runId: string,
): Promise<TestRun | undefined> {
  return (await archivedRuns(db, queueId, [runId])).get(runId);
}

/** How many archived submissions ended in each state. */
export async function archivedPrCounts(db: Queryable, queueId: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('queue_archive')
    .select((eb) => ['state', eb.fn.countAll<number>().as('n')])
    .where('queue_id', '=', queueId)
    .where('kind', '=', 'pr')
    .groupBy('state')
    .execute();
  return new Map(rows.map((r) => [r.state ?? '', Number(r.n)]));
}

/** The latest archived submission of each of these PRs (one statement per chunk, not one per PR). */
export async function archivedPrsByNumber(
  db: Queryable,
  queueId: string,
  prNumbers: readonly number[],
): Promise<Map<number, PrEntry>> {
  const out = new Map<number, { seq: number; data: string }>();
  for (const part of chunked([...new Set(prNumbers)])) {
    const rows = await db
      .selectFrom('queue_archive')
      .select(['pr_number', 'seq', 'data'])
      .where('queue_id', '=', queueId)
      .where('kind', '=', 'pr')
      .where('pr_number', 'in', part)
      .execute();
    for (const r of rows) {
      const n = Number(r.pr_number);
      const seq = Number(r.seq);
      const held = out.get(n);
      if (held === undefined || seq > held.seq) out.set(n, { seq, data: r.data });
    }
  }
  return new Map([...out].map(([n, r]) => [n, JSON.parse(r.data) as PrEntry]));
}

/** Archived runs by id (one statement per chunk); ids not archived are absent. */
export async function archivedRuns(
  db: Queryable,
  queueId: string,
  runIds: readonly string[],
): Promise<Map<string, TestRun>> {
  const texts = await archivedRunTexts(db, queueId, [...new Set(runIds)]);
  const holders = holdersNamed([...texts.values()]).filter((id) => !texts.has(id));
  for (const [id, text] of await archivedRunTexts(db, queueId, holders)) texts.set(id, text);
  const ids = [...texts.keys()];
  const runs = runsFromArchive([...texts.values()], texts);
  const out = new Map<string, TestRun>();
  const wanted = new Set(runIds);
  runs.forEach((r, i) => {
    if (wanted.has(ids[i] as string)) out.set(r.id, r);
  });
  return out;
}

/** The stored JSON of archived runs by id (one statement per chunk). */
async function archivedRunTexts(
  db: Queryable,
  queueId: string,
  runIds: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const part of chunked(runIds)) {
    const rows = await db
      .selectFrom('queue_archive')
      .select(['key', 'data'])
      .where('queue_id', '=', queueId)
      .where('kind', '=', 'run')
      .where('key', 'in', part)
      .execute();
    for (const r of rows) out.set(r.key, r.data);
  }
  return out;
}

/** archivedPrCounts of several queues in one statement: queue id → state → count. */
export async function archivedPrCountsOf(
  db: Queryable,
  queueIds: readonly string[],
): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>(queueIds.map((id) => [id, new Map()]));
  for (const part of chunked([...queueIds])) {
    const rows = await db
      .selectFrom('queue_archive')
      .select((eb) => ['queue_id', 'state', eb.fn.countAll<number>().as('n')])
      .where('queue_id', 'in', part)
      .where('kind', '=', 'pr')
      .groupBy(['queue_id', 'state'])
      .execute();
    for (const r of rows) out.get(r.queue_id)?.set(r.state ?? '', Number(r.n));
  }
  return out;
}
