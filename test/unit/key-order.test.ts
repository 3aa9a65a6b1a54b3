// Passes are stored in test id order; the order comes from the parser threads' per-file sorts,
// merged, and must equal sorting all the upload's ids at once (ties in attempt order), whether the
// files' ids were used, computed on the request thread, or a mix.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IdentityContext } from '../../src/app/ingest/derive.ts';
import { identify } from '../../src/app/ingest/ingest.ts';
import { attemptOrder, keyOrder } from '../../src/app/ingest/key-order.ts';
import type { ParsedFile } from '../../src/app/ingest/parse-file.ts';

const IDENTITY: IdentityContext = { orgSlug: 'acme', repoFullName: 'github.com/acme/web', variant: '' };

/** A parsed file of passing attempts named `names`, with ids derived for `identity` (if any). */
function file(names: string[], identity: IdentityContext | undefined): ParsedFile {
  const attempts = names.map(
    (name) => ({ name, outcome: 'passed', timestamp: null }) as unknown as ParsedFile['attempts'][number],
  );
  // Stand-in ids: the names themselves (what matters is that the request thread uses or replaces them).
  return {
    name: 'f.xml',
    summary: {
      ok: true,
      counts: { testcases: 0, attempts: 0, failures: 0, skipped: 0, retries: 0 },
      problems: [],
    },
    attempts,
    ...(identity === undefined ? {} : { ids: { identity, testIds: names, order: keyOrder(names) } }),
  };
}

const nameLists = fc.array(
  fc.array(fc.constantFrom('a', 'b', 'c', 'ab', 'ba', 'é', 'Z', '0'), { maxLength: 30 }),
  { maxLength: 6 },
);

/** The order the upload stores its passes in, and the one sorting all its ids gives. */
function orders(files: ParsedFile[]) {
  const { attempts, runs } = identify(files, IDENTITY, 0);
  const ids = attempts.map((x) => x.testId);
  return { merged: [...attemptOrder(runs, ids)], sorted: [...keyOrder(ids)], runs };
}

describe('the order passes are stored in', () => {
  it('orders by id, ties in index order', () => {
    expect([...keyOrder(['b', 'a', 'b', 'a', 'c'])]).toEqual([1, 3, 0, 2, 4]);
  });

  it('merging the files’ own orders equals sorting the whole upload', () => {
    fc.assert(
      fc.property(nameLists, (lists) => {
        const all = orders(lists.map((names) => file(names, IDENTITY)));
        expect(all.runs).toBeDefined();
        expect(all.merged).toEqual(all.sorted);
      }),
    );
  });

  it('sorts on the request thread when a file was parsed without or with another identity', () => {
    fc.assert(
      fc.property(nameLists, (lists) => {
        const other = { ...IDENTITY, variant: 'linux' };
        const mixed = lists.map((names, i) => file(names, i === 0 ? other : i === 1 ? undefined : IDENTITY));
        const result = orders(mixed);
        if (lists.slice(0, 2).some((names) => names.length > 0)) expect(result.runs).toBeUndefined();
        expect(result.merged).toEqual(result.sorted);
      }),
    );
  });
});
