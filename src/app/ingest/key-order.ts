// The order an upload's passes are stored in: by test id, the key order of `test_passes`, so that
// 100k inserts walk the B-tree once instead of jumping across it (about 5x faster on SQLite).
// Sorting 100k ids costs ~0.15 s, so the parser thread sorts each file's attempts (derive.ts) and
// the request thread only merges the files' runs.
import type { IdentityContext } from './derive.ts';
import { sameIdentity } from './derive.ts';
import type { ParsedFile } from './parse-file.ts';

/** Indexes of `ids` in the order of their values (ties in index order). */
export function keyOrder(ids: readonly string[]): Int32Array {
  return new Int32Array(ids.length)
    .map((_, i) => i)
    .sort((a, b) => {
      const x = ids[a] as string;
      const y = ids[b] as string;
      return x < y ? -1 : x > y ? 1 : a - b;
    });
}

/** Two runs of indexes, each ordered by id, as one (ties: the left run's first). */
function merge(a: Int32Array, b: Int32Array, idOf: (i: number) => string): Int32Array {
  const out = new Int32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as number;
    const y = b[j] as number;
    if (idOf(y) < idOf(x)) {
      out[k++] = y;
      j++;
    } else {
      out[k++] = x;
      i++;
    }
  }
  out.set(a.subarray(i), k);
  out.set(b.subarray(j), k + a.length - i);
  return out;
}

/**
 * The indexes of the upload's attempts (all files' attempts in file order) ordered by test id.
 * `idsFromFiles`: the attempts carry the ids the files were parsed with (none was re-derived); then
 * the files' own orders are merged, otherwise the ids are sorted here.
 */
export function attemptOrder(
  files: readonly ParsedFile[],
  identity: IdentityContext,
  testIds: readonly string[],
  idsFromFiles: boolean,
): Int32Array {
  const runs: Int32Array[] = [];
  let offset = 0;
  for (const f of files) {
    if (f.attempts.length === 0) continue;
    if (!idsFromFiles || f.ids === undefined || !sameIdentity(f.ids.identity, identity))
      return keyOrder(testIds);
    runs.push(offset === 0 ? f.ids.order : f.ids.order.map((i) => i + offset));
    offset += f.attempts.length;
  }
  const idOf = (i: number) => testIds[i] as string;
  while (runs.length > 1) {
    const paired: Int32Array[] = [];
    for (let r = 0; r < runs.length; r += 2) {
      const right = runs[r + 1];
      paired.push(right === undefined ? (runs[r] as Int32Array) : merge(runs[r] as Int32Array, right, idOf));
    }
    runs.splice(0, runs.length, ...paired);
  }
  return runs[0] ?? new Int32Array(0);
}
