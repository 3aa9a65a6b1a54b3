// A queue's state stored the way src/app/queue/apply.ts stores it (a header, a row per PR entry and per
// run, each step writing the rows rowChanges gives), kept in maps instead of a database, so the unit
// tests can read the rows back (row-shape.ts: stateFromRows) after every step of a random sequence.
// Runs pruned out of the state are archived as src/store/queue/archive.ts writes them (some without
// their heads, naming the run of their step that holds them) and must read back as they were.
import { rowChanges } from '../../../src/app/queue/apply.ts';
import { stateFromRows } from '../../../src/app/queue/row-shape.ts';
import type { QueueState, TestRun } from '../../../src/domain/queue/index.ts';
import { IntMap } from '../../../src/lib/int-map.ts';
import { archivedRunJson, runsFromArchive } from '../../../src/store/queue/archive.ts';

export class RowStore {
  #version = 0;
  #header = '';
  #held: QueueState;
  readonly #prs = new Map<number, string>();
  readonly #runs = new Map<string, { ord: number; data: string }>();
  /** Parts of entries' histories by PR, by index (row-shape.ts: entry rows leave their history out). */
  readonly #history = new Map<number, Map<number, string>>();
  /** History parts written so far (a step writes one per entry whose history grew). */
  historyParts = 0;
  readonly #archive = new Map<string, string>();
  /** Archived runs stored without their heads (read back from another run's). */
  archivedWithoutHeads = 0;

  constructor(initial: QueueState) {
    this.#held = { ...initial, prs: new IntMap(), runs: {} };
    this.save(initial);
  }

  /** Writes what changed since the last state saved, as applyEvent does. */
  save(next: QueueState): void {
    this.#version += 1;
    const changes = rowChanges(this.#held, next, this.#version);
    this.#header = JSON.stringify({ ...next, prs: {}, runs: {} });
    for (const n of changes.deletedPrs) this.#prs.delete(n);
    for (const n of [...changes.deletedPrs, ...(changes.historyCleared ?? [])]) this.#history.delete(n);
    for (const part of changes.history ?? []) {
      const parts = this.#history.get(part.number) ?? new Map<number, string>();
      if (parts.has(part.idx)) throw new Error(`history part ${part.number}/${part.idx} written twice`);
      parts.set(part.idx, part.data);
      this.#history.set(part.number, parts);
      this.historyParts += 1;
    }
    for (const id of changes.deletedRuns) this.#runs.delete(id);
    for (const row of [...changes.prs, ...(changes.prUpdates ?? [])]) this.#prs.set(row.number, row.data);
    for (const row of [...changes.runs, ...(changes.runUpdates ?? [])]) {
      // A run keeps its place (ord) once stored.
      const ord = this.#runs.get(row.id)?.ord ?? row.ord;
      this.#runs.set(row.id, { ord, data: row.data });
    }
    this.#held = next;
  }

  /** Archives runs pruned together (a run archived before is kept as it was: the archive ignores it). */
  archive(runs: readonly TestRun[]): void {
    archivedRunJson(runs).forEach((data, i) => {
      const id = (runs[i] as TestRun).id;
      if (this.#archive.has(id)) return;
      this.#archive.set(id, data);
      if (data.includes('"prHeadsOf"')) this.archivedWithoutHeads += 1;
    });
  }

  /** Archived runs read back, by id. */
  archived(ids: readonly string[]): TestRun[] {
    return runsFromArchive(
      ids.map((id) => this.#archive.get(id) ?? ''),
      this.#archive,
    );
  }

  /** The stored rows' JSON, as a reader gets them (PRs by number, runs by ord). */
  rows(): {
    header: string;
    prs: string[];
    runs: string[];
    history: { number: number; data: string }[];
  } {
    const prs = [...this.#prs].sort(([a], [b]) => a - b).map(([, data]) => data);
    const runs = [...this.#runs.values()].sort((a, b) => a.ord - b.ord).map((r) => r.data);
    const history = [...this.#history]
      .sort(([a], [b]) => a - b)
      .flatMap(([number, parts]) =>
        [...parts].sort(([a], [b]) => a - b).map(([, data]) => ({ number, data })),
      );
    return { header: this.#header, prs, runs, history };
  }

  /** The state read back from the rows. */
  load(): QueueState {
    const { header, ...rows } = this.rows();
    return stateFromRows(header, rows);
  }
}
