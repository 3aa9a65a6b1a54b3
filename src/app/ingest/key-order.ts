// The order an upload's passes are stored in: by test id, the key order of `test_passes`, so that
// 100k inserts walk the B-tree once instead of jumping across it (about 5x faster on SQLite).
// Sorting 100k ids costs ~0.15 s, so the parser thread sorts each file's attempts (derive.ts) and
// the request thread only merges the files' runs.
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
 * The indexes of the upload's attempts ordered by test id. `runs`: each file's own order (already
 * offset to the file's place among all attempts), when every file's ids were the ones stored; they
 * are merged. Without them (ids computed or re-derived here), the ids are sorted here.
 */
export function attemptOrder(
  runs: readonly Int32Array[] | undefined,
  testIds: readonly string[],
): Int32Array {
  if (runs === undefined) return keyOrder(testIds);
  const idOf = (i: number) => testIds[i] as string;
  let merged = [...runs];
  while (merged.length > 1) {
    const paired: Int32Array[] = [];
    for (let r = 0; r < merged.length; r += 2) {
      const right = merged[r + 1];
      paired.push(
        right === undefined ? (merged[r] as Int32Array) : merge(merged[r] as Int32Array, right, idOf),
      );
    }
    merged = paired;
  }
  return merged[0] ?? new Int32Array(0);
}
