import type { RepoRef } from '../app/repositories.ts';
import { repositoryHtmlUrl, testHtmlUrl } from '../app/urls.ts';

/**
 * The dashboard's page paths. The repository and test pages are exactly the html_url links of the
 * API (app/urls.ts, with an empty base); the others live under the repository's path.
 */
export const paths = {
  org: (org: string) => `/${encodeURIComponent(org)}`,
  repo: (org: string, repo: RepoRef) => repositoryHtmlUrl('', org, repo),
  test: (org: string, repo: RepoRef, testId: string) => testHtmlUrl('', org, repo, testId),
  queue: (org: string, repo: RepoRef, branch: string) =>
    `${repositoryHtmlUrl('', org, repo)}/queues/${encodeURIComponent(branch)}`,
  run: (org: string, repo: RepoRef, branch: string, runId: string) =>
    `${paths.queue(org, repo, branch)}/runs/${encodeURIComponent(runId)}`,
  pr: (org: string, repo: RepoRef, branch: string, n: number) => `${paths.queue(org, repo, branch)}/prs/${n}`,
  pull: (org: string, repo: RepoRef, n: number) => `${repositoryHtmlUrl('', org, repo)}/pulls/${n}`,
  failing: (org: string, repo: RepoRef) => `${repositoryHtmlUrl('', org, repo)}/failing`,
  allTests: (org: string, repo: RepoRef) => `${repositoryHtmlUrl('', org, repo)}/tests`,
  durations: (org: string, repo: RepoRef) => `${repositoryHtmlUrl('', org, repo)}/durations`,
  settings: (org: string, repo: RepoRef) => `${repositoryHtmlUrl('', org, repo)}/settings`,
  queueSettings: (org: string, repo: RepoRef, branch: string) => `${paths.queue(org, repo, branch)}/settings`,
  webhooks: (org: string) => `/${encodeURIComponent(org)}/webhooks`,
  deleteWebhook: (org: string, id: string) =>
    `/${encodeURIComponent(org)}/webhooks/${encodeURIComponent(id)}/delete`,
};

/** What a path under /{org}/repos/ names, once the repository part is known. */
export type RepoRoute =
  | { readonly page: 'repo' }
  | { readonly page: 'failing' }
  | { readonly page: 'tests' }
  | { readonly page: 'durations' }
  | { readonly page: 'settings' }
  | { readonly page: 'test'; readonly testId: string }
  | { readonly page: 'test-action'; readonly testId: string; readonly action: 'quarantine' | 'flag' }
  | { readonly page: 'queue'; readonly branch: string }
  | { readonly page: 'queue-settings'; readonly branch: string }
  | { readonly page: 'run'; readonly branch: string; readonly runId: string }
  | { readonly page: 'pr'; readonly branch: string; readonly number: number }
  | { readonly page: 'pull'; readonly number: number };

export interface RepoTarget {
  readonly repo: RepoRef;
  readonly route: RepoRoute;
}

const NUMBER = /^[1-9]\d{0,9}$/;

/** The route a tail of segments names, if any. */
function routeOf(tail: readonly string[]): RepoRoute | undefined {
  const [a, b, c, d] = tail;
  if (tail.length === 0) return { page: 'repo' };
  if (tail.length === 1 && a === 'failing') return { page: 'failing' };
  if (tail.length === 1 && a === 'tests') return { page: 'tests' };
  if (tail.length === 1 && a === 'durations') return { page: 'durations' };
  if (tail.length === 1 && a === 'settings') return { page: 'settings' };
  if (tail.length === 2 && a === 'tests' && b) return { page: 'test', testId: b };
  if (tail.length === 2 && a === 'queues' && b) return { page: 'queue', branch: b };
  if (tail.length === 2 && a === 'pulls' && b && NUMBER.test(b)) return { page: 'pull', number: Number(b) };
  if (tail.length === 3 && a === 'tests' && b && (c === 'quarantine' || c === 'flag')) {
    return { page: 'test-action', testId: b, action: c };
  }
  if (tail.length === 3 && a === 'queues' && b && c === 'settings')
    return { page: 'queue-settings', branch: b };
  if (tail.length === 4 && a === 'queues' && b && c === 'runs' && d)
    return { page: 'run', branch: b, runId: d };
  if (tail.length === 4 && a === 'queues' && b && c === 'prs' && d && NUMBER.test(d)) {
    return { page: 'pr', branch: b, number: Number(d) };
  }
  return undefined;
}

/**
 * The segments of a raw path (before the query string), each percent-decoded; undefined when one
 * does not decode or is empty (a trailing slash is allowed). Decoding segment by segment keeps an
 * encoded "/" inside a branch name (release%2F1.0) within its segment.
 */
export function pathSegments(rawUrl: string): string[] | undefined {
  const pathOnly = rawUrl.split('?')[0] ?? '';
  const parts = pathOnly.split('/').slice(1);
  if (parts.length > 1 && parts.at(-1) === '') parts.pop();
  try {
    const out = parts.map((p) => decodeURIComponent(p));
    return out.some((s) => s === '') ? undefined : out;
  } catch {
    return undefined;
  }
}

/**
 * Every way of reading the segments after /{org}/repos/ as a repository (host, owner of one or more
 * segments, name) and a route, the most specific first. The caller takes the first whose repository
 * exists: an owner may have segments named like a route ("tests"), so only the data can tell.
 */
export function repoTargets(segments: readonly string[]): RepoTarget[] {
  const out: RepoTarget[] = [];
  for (const tailLength of [4, 3, 2, 1, 0]) {
    if (segments.length - tailLength < 3) continue;
    const route = routeOf(segments.slice(segments.length - tailLength));
    if (route === undefined) continue;
    const repoPart = segments.slice(0, segments.length - tailLength);
    const host = repoPart[0] ?? '';
    const name = repoPart.at(-1) ?? '';
    out.push({ repo: { host, owner: repoPart.slice(1, -1).join('/'), name }, route });
  }
  return out;
}
