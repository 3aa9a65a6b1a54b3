// Test ids of attempts, remembered per app (its Derivation: derive.ts). A test id is a SHA-1 over
// the test's identity fields; a suite uploaded again, the usual case, has the same identities as
// before, so a lookup by those fields (far cheaper than the hash) answers most of them. Consecutive
// attempts usually share file, classname and parent: the map of names under that prefix is reused
// while they stay the same, so a known attempt costs one Map lookup by name.
import type { JunitAttempt } from '../../../domain/junit/index.ts';
import { testCaseId } from '../../../domain/testid/index.ts';
import type { IdentityContext } from './types.ts';

/** Ids by name, for tests without a custom id and (keyed by custom id and name) with one. */
interface Names {
  readonly plain: Map<string, string>;
  readonly custom: Map<string, string>;
}

/** Joins values so that different lists never give the same key: each is null or length-prefixed. */
function key(values: readonly (string | null | undefined)[]): string {
  let joined = '';
  for (const v of values) joined += v === null || v === undefined ? '-' : `${v.length}:${v}`;
  return joined;
}

export class TestIdMemo {
  /** identity key → key of (file, classname, parent) → names → test id. */
  readonly #byIdentity = new Map<string, Map<string, Names>>();
  #size = 0;
  // The last prefix looked up, and its names.
  #identity: IdentityContext | undefined;
  #file: string | null = null;
  #classname: string | null = null;
  #parent: string | null = null;
  #names: Names | undefined;

  /** `max`: ids remembered at most (MAINLINE_TEST_ID_CACHE); when full, all are forgotten. */
  constructor(private readonly max: number) {}

  get size(): number {
    return this.#size;
  }

  id(identity: IdentityContext, a: JunitAttempt): string {
    const custom = a.customId ?? null;
    const name = custom === null ? a.name : key([custom, a.name]);
    // (No closure here: one per call would cost more than the lookup it serves.)
    let ids = this.#idsFor(identity, a);
    const known = ids.get(name);
    if (known !== undefined) return known;
    const id = testCaseId({
      orgSlug: identity.orgSlug,
      repoFullName: identity.repoFullName,
      file: a.file,
      classname: a.classname,
      parent: a.parent,
      name: a.name,
      customId: a.customId,
      variant: identity.variant,
    });
    if (this.#size >= this.max) {
      this.clear();
      // The prefix's maps are new ones now.
      ids = this.#idsFor(identity, a);
    }
    ids.set(name, id);
    this.#size++;
    return id;
  }

  clear(): void {
    this.#byIdentity.clear();
    this.#size = 0;
    this.#identity = undefined;
    this.#names = undefined;
  }

  /** The ids by name of the attempt's prefix: those of tests with a custom id, or of those without. */
  #idsFor(identity: IdentityContext, a: JunitAttempt): Map<string, string> {
    const names = this.#namesFor(identity, a);
    return (a.customId ?? null) === null ? names.plain : names.custom;
  }

  #namesFor(identity: IdentityContext, a: JunitAttempt): Names {
    if (
      this.#names !== undefined &&
      identity === this.#identity &&
      a.file === this.#file &&
      a.classname === this.#classname &&
      a.parent === this.#parent
    )
      return this.#names;
    const identityKey = key([identity.orgSlug, identity.repoFullName, identity.variant]);
    let prefixes = this.#byIdentity.get(identityKey);
    if (prefixes === undefined) {
      prefixes = new Map();
      this.#byIdentity.set(identityKey, prefixes);
    }
    const prefix = key([a.file, a.classname, a.parent]);
    let names = prefixes.get(prefix);
    if (names === undefined) {
      names = { plain: new Map(), custom: new Map() };
      prefixes.set(prefix, names);
    }
    this.#identity = identity;
    this.#file = a.file;
    this.#classname = a.classname;
    this.#parent = a.parent;
    this.#names = names;
    return names;
  }
}
