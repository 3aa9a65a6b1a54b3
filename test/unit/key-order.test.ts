// Passes are stored in test id order; the order comes from the parser threads' per-file sorts,
// merged, and must equal sorting all the upload's ids at once (ties in attempt order).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IdentityContext } from '../../src/app/ingest/derive.ts';
import { attemptOrder, keyOrder } from '../../src/app/ingest/key-order.ts';
import type { ParsedFile } from '../../src/app/ingest/parse-file.ts';

const IDENTITY: IdentityContext = { orgSlug: 'acme', repoFullName: 'github.com/acme/web', variant: '' };

/** A parsed file whose attempts have these ids (only what attemptOrder reads is filled in). */
function file(ids: string[], identity: IdentityContext | undefined = IDENTITY): ParsedFile {
  return {
    name: 'f.xml',
    summary: {
      ok: true,
      counts: { testcases: 0, attempts: 0, failures: 0, skipped: 0, retries: 0 },
      problems: [],
    },
    attempts: ids.map(() => ({}) as ParsedFile['attempts'][number]),
    ...(identity === undefined ? {} : { ids: { identity, testIds: ids, order: keyOrder(ids) } }),
  };
}

const idLists = fc.array(
  fc.array(fc.constantFrom('a', 'b', 'c', 'ab', 'ba', 'é', 'Z', '0'), { maxLength: 30 }),
  {
    maxLength: 6,
  },
);

describe('the order passes are stored in', () => {
  it('orders by id, ties in index order', () => {
    expect([...keyOrder(['b', 'a', 'b', 'a', 'c'])]).toEqual([1, 3, 0, 2, 4]);
  });

  it('merging the files’ own orders equals sorting the whole upload', () => {
    fc.assert(
      fc.property(idLists, (lists) => {
        const all = lists.flat();
        const expected = [...keyOrder(all)];
        expect([
          ...attemptOrder(
            lists.map((ids) => file(ids)),
            IDENTITY,
            all,
            true,
          ),
        ]).toEqual(expected);
        // Ids re-derived after parsing, or a file parsed without or with another identity: sorted here.
        expect([
          ...attemptOrder(
            lists.map((ids) => file(ids)),
            IDENTITY,
            all,
            false,
          ),
        ]).toEqual(expected);
        const other = { ...IDENTITY, variant: 'linux' };
        const mixed = lists.map((ids, i) => file(ids, i === 0 ? other : i === 1 ? undefined : IDENTITY));
        expect([...attemptOrder(mixed, IDENTITY, all, true)]).toEqual(expected);
      }),
    );
  });
});
