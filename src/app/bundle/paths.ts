/** Checking and normalising the path of a tar entry (or of a file meta.json names). */

export type EntryPath =
  /** A relative path with no `..`, normalised: `/`-separated, no empty or `.` segments. */
  | { readonly ok: true; readonly path: string }
  /** The path is refused; `reason` says why. */
  | { readonly ok: false; readonly reason: string };

/**
 * Refuses absolute paths (`/x`, `\x`, `C:x`), any `..` segment and NUL bytes. Backslashes count as
 * separators, because that is how a Windows extractor would read them.
 */
export function checkEntryPath(raw: string): EntryPath {
  if (raw.includes('\0')) return { ok: false, reason: 'the path contains a NUL byte' };
  if (/^[/\\]/.test(raw) || /^[A-Za-z]:/.test(raw)) return { ok: false, reason: 'the path is absolute' };
  const segments = raw.split(/[/\\]/);
  if (segments.includes('..')) return { ok: false, reason: 'the path contains ".."' };
  const path = segments.filter((s) => s !== '' && s !== '.').join('/');
  if (path === '') return { ok: false, reason: 'the path is empty' };
  return { ok: true, path };
}

/** How the analytics CLI names JUnit entries (`junit/<n>`), or a JUnit-looking file name. */
export function looksLikeJunit(path: string): boolean {
  return path.startsWith('junit/') || /\.(?:xml|junit)$/i.test(path);
}
