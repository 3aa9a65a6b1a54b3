/**
 * A ref's value read from the bare repository's files, without starting git: the loose ref file first,
 * then packed-refs, following symbolic refs — the order git's files backend resolves a full ref name in.
 * It answers only what it is sure of; anything unusual (a reftable repository, a ref file git would call
 * broken, a symbolic ref out of refs/ or too deep, an unreadable file) is `undefined`, and the caller asks
 * git itself. The value is the object the ref names, not peeled: callers use it as a cheap identity of
 * the branch's position (same value ⇒ same commit), and peel with git when they need the commit.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/** git's SYMREF_MAXDEPTH. */
const MAX_DEPTH = 5;

/** Codes meaning "no loose file for this ref" to git's files backend (it then looks in packed-refs). */
const NO_LOOSE = new Set(['ENOENT', 'EISDIR']);

/**
 * Read synchronously on purpose: a ref file is a few dozen bytes on a local disk, and the promise API
 * goes through the thread pool four times a file, which put ~5 ms on getQueue's p99 under load
 * (docs/benchmarks-queue.md, getQueue) where the read itself takes microseconds.
 */
function readOrCode(path: string): { text: string } | { code: string } {
  try {
    return { text: readFileSync(path, 'utf8') };
  } catch (error) {
    return { code: (error as NodeJS.ErrnoException).code ?? 'UNKNOWN' };
  }
}

/** The object id packed-refs records for ref, null when it has none, undefined when unsure. */
async function packedRef(gitDir: string, ref: string): Promise<string | null | undefined> {
  const file = readOrCode(join(gitDir, 'packed-refs'));
  if ('code' in file) return file.code === 'ENOENT' ? null : undefined;
  for (const line of file.text.split('\n')) {
    if (line === '' || line.startsWith('#') || line.startsWith('^')) continue;
    const space = line.indexOf(' ');
    if (line.slice(space + 1).trimEnd() !== ref) continue;
    const oid = line.slice(0, space);
    return OID.test(oid) ? oid : undefined;
  }
  return null;
}

/**
 * The object id ref (a full name such as refs/heads/main, already validated by the caller) points at,
 * null when the ref does not exist, undefined when only git can tell.
 */
export async function readRefValue(gitDir: string, ref: string): Promise<string | null | undefined> {
  let name = ref;
  for (let depth = 0; depth <= MAX_DEPTH; depth++) {
    const loose = readOrCode(join(gitDir, name));
    if ('code' in loose) return NO_LOOSE.has(loose.code) ? packedRef(gitDir, name) : undefined;
    const text = loose.text;
    if (text.startsWith('ref:')) {
      const target = text.slice(4).trim();
      if (!target.startsWith('refs/') || target.includes('..') || /\s/.test(target)) return undefined;
      name = target;
      continue;
    }
    // An object id, then nothing or whitespace (git ignores what follows); anything else is broken.
    const oid = /^([0-9a-f]+)(?:\s[\s\S]*)?$/.exec(text)?.[1];
    return oid !== undefined && OID.test(oid) ? oid : undefined;
  }
  return undefined;
}
