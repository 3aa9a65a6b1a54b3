/**
 * The tar visitor: decides which entries are kept (meta.json, CODEOWNERS, JUnit files, internal.bin),
 * enforces the entry-count and per-entry caps, and skips everything else without buffering it. JUnit
 * entries are streamed to a sink as they are decoded (never held here), so a bundle's inflated size
 * never has to fit in memory; only meta.json and CODEOWNERS, each under its own cap, are buffered.
 * internal.bin (the CLI's protobuf test report) is decoded here as it streams, one run at a time
 * (domain/internal-bin), and its runs go to the sink as attempts.
 *
 * Source of truth (docs/upload-contract.md): the JUnit files when the bundle has any; internal.bin
 * only when it has none (the rspec plugin's bundles, an empty run). When meta.json lists JUnit files,
 * internal.bin is not read at all.
 *
 * Policy for hostile entries: symlinks, hard links, devices, FIFOs, unknown entry types, absolute
 * paths and paths with `..` are SKIPPED with a problem; the rest of the bundle is still read (we never
 * write entries to disk, so such an entry can do no harm once skipped). A JUnit file meta.json lists
 * but that was skipped is then reported missing. Size and count limits refuse the whole bundle.
 */
import { createInternalBinDecoder, type InternalBinDecoder } from '../../domain/internal-bin/index.ts';
import type { JunitAttempt, JunitFileSummary } from '../../domain/junit/index.ts';
import type { EntryDecision, TarEntry, TarVisitor } from '../../lib/archive/tar.ts';
import { type ParsedMeta, parseMeta } from './meta.ts';
import { checkEntryPath, looksLikeJunit } from './paths.ts';
import {
  type BundleErrorCode,
  type BundleLimits,
  type BundleUploadMeta,
  type Failure,
  fail,
  formatBytes,
  OK,
  type Verdict,
} from './types.ts';

const META_NAME = 'meta.json';
const CODEOWNERS_NAME = 'CODEOWNERS';
/** Where the CLI puts its test report when meta.json does not say (bundler.rs INTERNAL_BIN_FILENAME). */
const INTERNAL_NAME = 'internal.bin';
/** Attempts per batch handed to the sink (as a parser thread batches them). */
const INTERNAL_BATCH = 8192;
const SKIP: EntryDecision = { ok: true, keep: false };
const KEEP: EntryDecision = { ok: true, keep: true };

type Role = 'meta' | 'codeowners' | 'junit' | 'internal';

/** Where the collector hands what it reads, as it reads it. */
export interface BundleSink {
  /** meta.json was read and is usable (CODEOWNERS, if any, is not known yet). */
  meta(meta: BundleUploadMeta): void;
  /** The CODEOWNERS entry was read. */
  codeowners(text: string): void;
  /** A JUnit candidate starts: `size` bytes follow through `fileData`, then `fileEnd`. */
  fileStart(name: string, size: number): Verdict;
  /** The next bytes of the current file; they may be reused after the call (copy to keep them). */
  fileData(bytes: Uint8Array): Verdict;
  fileEnd(): Verdict;
  /** The bundle's internal.bin starts: its runs follow as `internalAttempts`, then `internalEnd`. */
  internalStart(name: string): Verdict;
  /** internal.bin's next attempts, in order; provisional until `internalEnd`'s summary is ok. */
  internalAttempts(batch: JunitAttempt[]): Verdict;
  /** internal.bin was read: ok (its attempts count), or refused with one error (they do not). */
  internalEnd(summary: JunitFileSummary): Verdict;
}

interface Current {
  readonly role: Role;
  readonly name: string;
  /** meta.json and CODEOWNERS are buffered; a JUnit file's bytes go to the sink. */
  readonly bytes: Uint8Array | undefined;
  filled: number;
  /** internal.bin's decoder. */
  readonly decoder?: InternalBinDecoder;
}

export class BundleCollector implements TarVisitor<BundleErrorCode> {
  readonly problems: string[] = [];
  meta: ParsedMeta | undefined;
  codeowners: Uint8Array | undefined;
  /** Names of the JUnit candidates handed to the sink, in tar order. */
  readonly candidates = new Set<string>();
  /** internal.bin, once read (its attempts went to the sink). */
  internal: { readonly name: string; readonly summary: JunitFileSummary } | undefined;
  private entries = 0;
  private current: Current | undefined;
  /** The sink refused internal.bin's attempts (decoding stopped): the refusal to answer. */
  private stopped: Failure | undefined;

  constructor(
    private readonly limits: BundleLimits,
    private readonly sink: BundleSink,
  ) {}

  entry(entry: TarEntry): EntryDecision<BundleErrorCode> {
    this.entries++;
    if (this.entries > this.limits.maxEntries) {
      return fail('too_large', `the bundle has more than ${this.limits.maxEntries} entries`);
    }
    if (entry.type === 'directory') return SKIP;
    if (entry.type !== 'file') {
      this.problems.push(
        `skipped ${entry.type} entry ${JSON.stringify(entry.name)}: only regular files are read`,
      );
      return SKIP;
    }
    const checked = checkEntryPath(entry.name);
    if (!checked.ok) {
      this.problems.push(`skipped entry ${JSON.stringify(entry.name)}: ${checked.reason}`);
      return SKIP;
    }
    if (entry.size > this.limits.maxFileBytes) {
      return fail(
        'too_large',
        `entry "${checked.path}" is ${entry.size} bytes; the per-file limit is ${formatBytes(this.limits.maxFileBytes)}`,
      );
    }
    return this.decide(checked.path, entry.size);
  }

  data(bytes: Uint8Array): Verdict {
    const current = this.current;
    if (current === undefined) throw new Error('tar reader passed data of an entry that was not kept');
    if (current.decoder !== undefined) {
      current.decoder.write(bytes);
      return this.stopped ?? OK;
    }
    if (current.bytes === undefined) return this.sink.fileData(bytes);
    if (current.filled + bytes.length > current.bytes.length)
      throw new Error('tar reader passed more data than the entry declared');
    current.bytes.set(bytes, current.filled);
    current.filled += bytes.length;
    return OK;
  }

  entryEnd(): Verdict {
    const current = this.current;
    this.current = undefined;
    if (current === undefined) throw new Error('tar reader ended an entry that was not kept');
    if (current.role === 'junit') return this.sink.fileEnd();
    if (current.decoder !== undefined) {
      const summary = current.decoder.close();
      if (this.stopped !== undefined) return this.stopped;
      this.internal = { name: current.name, summary };
      return this.sink.internalEnd(summary);
    }
    const bytes = current.bytes ?? new Uint8Array(0);
    if (current.role === 'codeowners') {
      this.codeowners = bytes;
      this.sink.codeowners(new TextDecoder().decode(bytes));
      return OK;
    }
    this.meta = parseMeta(bytes);
    if (!this.meta.ok) return this.meta;
    this.sink.meta(this.meta.meta);
    return OK;
  }

  private decide(name: string, size: number): EntryDecision<BundleErrorCode> {
    const role = this.roleOf(name);
    if (role === undefined) return SKIP;
    if (role === 'internal') return this.startInternal(name);
    if (role === 'meta') {
      if (this.meta !== undefined) return fail('invalid_meta', 'the bundle has more than one meta.json');
      if (size > this.limits.maxMetaBytes) {
        return fail(
          'too_large',
          `meta.json is ${size} bytes; the limit is ${formatBytes(this.limits.maxMetaBytes)}`,
        );
      }
    } else if (role === 'codeowners' && size > this.limits.maxCodeownersBytes) {
      this.problems.push(
        `skipped CODEOWNERS: ${size} bytes is over ${formatBytes(this.limits.maxCodeownersBytes)}`,
      );
      return SKIP;
    } else if (this.candidates.has(name) || (role === 'codeowners' && this.codeowners !== undefined)) {
      this.problems.push(`skipped a second entry named ${JSON.stringify(name)}`);
      return SKIP;
    }
    if (role === 'junit') {
      this.candidates.add(name);
      this.current = { role, name, bytes: undefined, filled: 0 };
      const started = this.sink.fileStart(name, size);
      return started.ok ? KEEP : started;
    }
    this.current = { role, name, bytes: new Uint8Array(size), filled: 0 };
    return KEEP;
  }

  /** internal.bin, unless the bundle's JUnit files are its source (or one was read already). */
  private startInternal(name: string): EntryDecision<BundleErrorCode> {
    const junitListed = this.meta?.ok === true && this.meta.meta.junitFiles.length > 0;
    if (junitListed || this.internal !== undefined) return SKIP;
    const max = this.limits.maxInternalRuns;
    const decoder = createInternalBinDecoder({
      limits: { maxAttempts: max },
      attemptsLimitMessage: `${name} has more than ${max} test case runs, the most one upload may hold (MAINLINE_MAX_UPLOAD_ATTEMPTS)`,
      batchSize: INTERNAL_BATCH,
      onAttempts: (batch) => {
        if (this.stopped !== undefined) return;
        const taken = this.sink.internalAttempts(batch);
        if (!taken.ok) this.stopped = taken;
      },
    });
    this.current = { role: 'internal', name, bytes: undefined, filled: 0, decoder };
    const started = this.sink.internalStart(name);
    return started.ok ? KEEP : started;
  }

  private roleOf(name: string): Role | undefined {
    if (name === META_NAME) return 'meta';
    if (name === CODEOWNERS_NAME) return 'codeowners';
    const meta = this.meta?.ok ? this.meta.meta : undefined;
    if (name === (meta?.internalFile ?? INTERNAL_NAME)) return 'internal';
    // Once meta.json (the CLI's first entry) is read, keep exactly the files it lists.
    const listed = meta?.junitFiles ?? [];
    if (listed.length > 0) return listed.some((f) => f.path === name) ? 'junit' : undefined;
    return looksLikeJunit(name) ? 'junit' : undefined;
  }
}

/** A JUnit file to ingest: its entry's name (as handed to the sink) and where the CLI found it. */
export interface SelectedFile {
  readonly name: string;
  readonly originalPath?: string;
}

/**
 * The JUnit files to ingest, in order: those meta.json lists, else every JUnit-looking entry. Entries
 * read before meta.json that it does not list were handed to the sink but are not selected.
 */
export function selectJunitFiles(
  collector: BundleCollector,
  parsed: ParsedMeta & { ok: true },
): SelectedFile[] {
  const listed = parsed.meta.junitFiles;
  if (listed.length === 0) {
    if (collector.candidates.size > 0)
      collector.problems.push('meta.json lists no JUnit files; read every junit/* and *.xml entry');
    return [...collector.candidates].map((name) => ({ name }));
  }
  return listed.flatMap((ref) => {
    if (!collector.candidates.has(ref.path)) {
      collector.problems.push(`meta.json lists ${JSON.stringify(ref.path)} but the bundle has no such file`);
      return [];
    }
    return [
      { name: ref.path, ...(ref.originalPath === undefined ? {} : { originalPath: ref.originalPath }) },
    ];
  });
}
