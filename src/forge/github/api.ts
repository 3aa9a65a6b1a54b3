/**
 * The few shapes of GitHub's REST answers the forge reads (only the fields listed in the REST subset the
 * simulator serves), and helpers for errors and paths.
 */

export interface GhPull {
  number: number;
  title: string;
  state: 'open' | 'closed';
  merged: boolean;
  draft?: boolean;
  user: { login: string } | null;
  head: { ref: string; sha: string };
  base: { ref: string; sha: string };
  mergeable: boolean | null;
  /** Set once merged (not in the subset's required fields: used when present). */
  merge_commit_sha?: string | null;
}

export interface GhWorkflowRun {
  id: number;
  event: string;
  status: string | null;
  head_sha: string;
  created_at: string;
  run_started_at?: string;
  repository: { full_name: string };
  /** The repository the run's code comes from (a fork for a fork's pull request). */
  head_repository?: { full_name: string } | null;
}

export interface GhRef {
  ref: string;
  object: { sha: string; type: string };
}

export interface GhComment {
  id: number;
  body?: string;
}

export interface GhRule {
  type: string;
  parameters?: { required_status_checks?: { context: string }[] };
}

/** A branch name as path segments: each part percent-encoded, the slashes kept (`git/ref/heads/a/b`). */
export function pathOf(branch: string): string {
  return branch.split('/').map(encodeURIComponent).join('/');
}

/** The HTTP status of an Octokit RequestError (network failures come as 500), else undefined. */
export function statusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** GitHub's own message (`{message}`) when there is one, else the error's. */
export function messageOf(err: unknown): string {
  const data = (err as { response?: { data?: unknown } } | null)?.response?.data;
  const message = (data as { message?: unknown } | null | undefined)?.message;
  if (typeof message === 'string' && message !== '') return message;
  return err instanceof Error ? err.message : String(err);
}

/** The value of `call`, or `fallback` when GitHub answers one of `statuses`. */
export async function unless<T, F>(statuses: number[], fallback: F, call: () => Promise<T>): Promise<T | F> {
  try {
    return await call();
  } catch (err) {
    const status = statusOf(err);
    if (status !== undefined && statuses.includes(status)) return fallback;
    throw err;
  }
}

/** Worth repeating: a 5xx or a network failure (Octokit reports those as 500); it may have taken effect. */
export function isTransient(err: unknown): boolean {
  const status = statusOf(err);
  return status !== undefined && status >= 500;
}
