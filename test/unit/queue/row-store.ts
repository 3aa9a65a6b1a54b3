// A queue's state stored the way src/app/queue/apply.ts stores it (a header, a row per PR entry and per
// run, each step writing the rows rowChanges gives), kept in maps instead of a database, so the unit
// tests can read the rows back (row-shape.ts: stateFromRows) after every step of a random sequence.
import { rowChanges } from '../../../src/app/queue/apply.ts';
import { stateFromRows } from '../../../src/app/queue/row-shape.ts';
import type { QueueState } from '../../../src/domain/queue/index.ts';
import { IntMap } from '../../../src/lib/int-map.ts';

export class RowStore {
  #version = 0;
  #header = '';
  #held: QueueState;
  readonly #prs = new Map<number, string>();
  readonly #runs = new Map<string, { ord: number; data: string }>();

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
    for (const id of changes.deletedRuns) this.#runs.delete(id);
    for (const row of [...changes.prs, ...(changes.prUpdates ?? [])]) this.#prs.set(row.number, row.data);
    for (const row of [...changes.runs, ...(changes.runUpdates ?? [])]) {
      // A run keeps its place (ord) once stored.
      const ord = this.#runs.get(row.id)?.ord ?? row.ord;
      this.#runs.set(row.id, { ord, data: row.data });
    }
    this.#held = next;
  }

  /** The stored rows' JSON, as a reader gets them (PRs by number, runs by ord). */
  rows(): { header: string; prs: string[]; runs: string[] } {
    const prs = [...this.#prs].sort(([a], [b]) => a - b).map(([, data]) => data);
    const runs = [...this.#runs.values()].sort((a, b) => a.ord - b.ord).map((r) => r.data);
    return { header: this.#header, prs, runs };
  }

  /** The state read back from the rows. */
  load(): QueueState {
    const { header, ...rows } = this.rows();
    return stateFromRows(header, rows);
  }
}
