/** meta.json → BundleUploadMeta. See index.ts for the format and its sources. */
import { branchName, detectCi, parseGitRemote, pullRequestOfRef, type RepoRef } from '../../domain/ci-env.ts';
import { checkEntryPath } from './paths.ts';
import { type BundleJunitFileRef, type BundleUploadMeta, type Failure, fail } from './types.ts';

type Json = Record<string, unknown>;

/** What a pull request's bundle that names no branch is stored under, and how to name it. */
export function prBranchUnknown(pr: number): string {
  return `meta.json names no branch for pull request ${pr} (repo.repo_head_branch is its merge ref and no CI variable in envs names the branch): its results are stored under the branch pull/${pr}; pass --repo-head-branch (TRUNK_REPO_HEAD_BRANCH) to store them under the PR's branch`;
}

/** Why a bundle has no branch, and what to send instead. */
export const NO_BRANCH =
  "meta.json names no branch: repo.repo_head_branch is missing or a pull request's merge ref, and no CI variable in envs names the branch (e.g. GITHUB_HEAD_REF); pass it with --repo-head-branch (TRUNK_REPO_HEAD_BRANCH)";

/** meta.json read, before the CODEOWNERS entry (which may come later in the tar) is known. */
export type ParsedMeta =
  /** Usable: `problems` lists what was ignored. */
  | { readonly ok: true; readonly meta: BundleUploadMeta; readonly raw: Json; readonly problems: string[] }
  /** Not usable. */
  | Failure;

function object(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function integer(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
}

function stringMap(value: unknown): Record<string, string> {
  const entries = Object.entries(object(value) ?? {}).filter(([, v]) => typeof v === 'string');
  return Object.fromEntries(entries) as Record<string, string>;
}

/**
 * `refs/heads/main` and `refs/remotes/origin/main` (what the CLI records from git) → `main`; a pull
 * request's merge ref (`refs/remotes/pull/42/merge`, a CI checkout) names no branch → undefined.
 */
export function normaliseBranch(branch: string | undefined): string | undefined {
  return branchName(branch);
}

function repoFrom(repo: Json, fallback: RepoRef | undefined): RepoRef | undefined {
  const parts = object(repo['repo']) ?? {};
  const host = text(parts['host']);
  const owner = text(parts['owner']);
  const name = text(parts['name']);
  if (host !== undefined && owner !== undefined && name !== undefined) return { host, owner, name };
  const url = text(repo['repo_url']);
  return (url === undefined ? undefined : parseGitRemote(url)) ?? fallback;
}

function junitFileRef(file: unknown, problems: string[]): BundleJunitFileRef | undefined {
  const item = object(file) ?? {};
  const raw = text(item['path']);
  if (raw === undefined) return undefined;
  const checked = checkEntryPath(raw);
  if (!checked.ok) {
    problems.push(`meta.json lists JUnit file ${JSON.stringify(raw)}, ignored: ${checked.reason}`);
    return undefined;
  }
  const originalPath = text(item['original_path']);
  const originalPathRel = text(item['original_path_rel']);
  return {
    path: checked.path,
    ...(originalPath === undefined ? {} : { originalPath }),
    ...(originalPathRel === undefined ? {} : { originalPathRel }),
  };
}

/** Files of the `Junit` file sets (a missing type counts as Junit); `Internal` (.bin) sets are skipped. */
function junitFiles(fileSets: unknown, problems: string[]): BundleJunitFileRef[] {
  const byPath = new Map<string, BundleJunitFileRef>();
  for (const set of Array.isArray(fileSets) ? fileSets : []) {
    const fileSet = object(set) ?? {};
    const type = text(fileSet['file_set_type'])?.toLowerCase() ?? 'junit';
    if (type !== 'junit') continue;
    for (const file of Array.isArray(fileSet['files']) ? fileSet['files'] : []) {
      const ref = junitFileRef(file, problems);
      if (ref !== undefined && !ref.path.endsWith('.bin') && !byPath.has(ref.path)) byPath.set(ref.path, ref);
    }
  }
  return [...byPath.values()];
}

/**
 * The entry holding the CLI's protobuf test report: `internal_bundled_file.path` (CLI ≥ 0.7.7; the
 * rspec plugin's own .bin is `internal/0`), else the first file of an `Internal` file set.
 */
function internalFile(raw: Json, problems: string[]): string | undefined {
  const bundled = text(object(raw['internal_bundled_file'])?.['path']);
  const fromSets = (Array.isArray(raw['file_sets']) ? raw['file_sets'] : []).flatMap((set) => {
    const fileSet = object(set) ?? {};
    if (text(fileSet['file_set_type'])?.toLowerCase() !== 'internal') return [];
    const files = Array.isArray(fileSet['files']) ? fileSet['files'] : [];
    return files.flatMap((file) => text(object(file)?.['path']) ?? []);
  });
  const path = bundled ?? fromSets[0];
  if (path === undefined) return undefined;
  const checked = checkEntryPath(path);
  if (!checked.ok) {
    problems.push(`meta.json names internal file ${JSON.stringify(path)}, ignored: ${checked.reason}`);
    return undefined;
  }
  return checked.path;
}

function tags(value: unknown): { key: string; value: string }[] {
  const list = Array.isArray(value) ? value : [];
  return list.flatMap((tag) => {
    const t = object(tag) ?? {};
    return typeof t['key'] === 'string' && typeof t['value'] === 'string'
      ? [{ key: t['key'], value: t['value'] }]
      : [];
  });
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** Parses meta.json's bytes (UTF-8 JSON object). */
export function parseMeta(bytes: Uint8Array): ParsedMeta {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder('utf-8').decode(bytes));
  } catch (error) {
    return fail(
      'invalid_meta',
      `meta.json is not valid JSON: ${error instanceof Error ? error.message : error}`,
    );
  }
  const meta = object(raw);
  if (meta === undefined) return fail('invalid_meta', 'meta.json is not a JSON object');
  return mapMeta(meta);
}

function mapMeta(raw: Json): ParsedMeta {
  const problems: string[] = [];
  const envs = stringMap(raw['envs']);
  const ci = detectCi(envs);
  const repoJson = object(raw['repo']) ?? {};
  const repo = repoFrom(repoJson, ci.repo);
  if (repo === undefined) {
    return fail(
      'invalid_meta',
      'meta.json does not name the repository (repo.repo {host, owner, name} or repo.repo_url)',
    );
  }
  const commitSha = text(repoJson['repo_head_sha']) ?? ci.commitSha;
  if (commitSha === undefined)
    return fail('invalid_meta', 'meta.json has no commit SHA (repo.repo_head_sha)');
  // What CI says wins over what git recorded: on a pull request the checkout is the merge ref
  // (repo_head_branch "refs/remotes/pull/42/merge") while the envs name the PR's branch. Only
  // values the user passed explicitly (use_uncloned_repo) win over CI, as in the CLI itself.
  const headBranch = text(repoJson['repo_head_branch']);
  const userGiven = repoJson['use_uncloned_repo'] === true || raw['use_uncloned_repo'] === true;
  const named = userGiven
    ? (normaliseBranch(headBranch) ?? ci.branch)
    : (ci.branch ?? normaliseBranch(headBranch));
  // A pull request whose branch nobody named (analytics-cli on Azure Pipelines sends only the merge
  // ref) is stored under pull/<n>, CircleCI's name for a fork's PR, rather than refused: the client
  // treats a refused upload as a failed step, and the PR's results still stay together.
  const pr = ci.prNumber ?? pullRequestOfRef(headBranch);
  const branch = named ?? (pr === undefined ? undefined : `pull/${pr}`);
  if (branch === undefined) problems.push(NO_BRANCH);
  else if (named === undefined) problems.push(prBranchUnknown(pr ?? 0));
  const version = raw['version'];
  if (version !== undefined && version !== '1')
    problems.push(`unknown meta.json version ${JSON.stringify(version)}`);
  const meta: BundleUploadMeta = {
    repo,
    commitSha,
    ...optional('branch', branch),
    ...optional('orgSlug', text(raw['org'])),
    ...optional('repoUrl', text(repoJson['repo_url'])),
    ...commitDetails(repoJson),
    ...ciDetails(ci, headBranch),
    ...optional('variant', text(raw['variant'])),
    ...optional('codeownersPath', text(object(raw['codeowners'])?.['path'])),
    ...optional('uploadTimeEpoch', integer(raw['upload_time_epoch'])),
    ...optional('testCommand', text(raw['test_command'])),
    ...optional('cliVersion', text(raw['cli_version'])),
    ...optional('bundleUploadId', text(raw['bundle_upload_id_v2']) ?? text(raw['bundle_upload_id'])),
    tags: tags(raw['tags']),
    envs,
    junitFiles: junitFiles(raw['file_sets'], problems),
    ...optional('internalFile', internalFile(raw, problems)),
  };
  return { ok: true, meta, raw, problems };
}

function commitDetails(repo: Json): Partial<BundleUploadMeta> {
  const epoch = integer(repo['repo_head_commit_epoch']);
  return {
    ...optional('commitEpoch', epoch === 0 ? undefined : epoch),
    ...optional('commitMessage', text(repo['repo_head_commit_message'])),
    ...optional('authorName', text(repo['repo_head_author_name'])),
    ...optional('authorEmail', text(repo['repo_head_author_email'])),
  };
}

function ciDetails(
  ci: ReturnType<typeof detectCi>,
  headBranch: string | undefined,
): Partial<BundleUploadMeta> {
  return {
    // A merge ref names its pull request even when the envs do not.
    ...optional('prNumber', ci.prNumber ?? pullRequestOfRef(headBranch)),
    ...optional('prTitle', ci.prTitle),
    ...optional('jobName', ci.jobName),
    ...optional('jobUrl', ci.jobUrl),
    ...optional('runAttempt', ci.runAttempt),
  };
}
