import { authorFor, type CommitInfo, isBranchName, ZERO_SHA } from './git.ts';
import { HttpError } from './http.ts';
import { emitPull } from './ops-pulls.ts';
import { type Core, isoNow, type RepoState, type Tx } from './state.ts';
import type { JsonObject } from './types.ts';

/** git's raw date ("@<seconds> +0000") → ISO 8601. */
function isoFromRaw(raw: string): string {
  const seconds = Number(/^@?(\d+)/.exec(raw)?.[1] ?? 0);
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function commitJson(core: Core, repo: RepoState, info: CommitInfo): JsonObject {
  return {
    sha: info.sha,
    node_id: `C_${info.sha}`,
    url: core.apiUrl(repo, `/commits/${info.sha}`),
    html_url: core.htmlUrl(repo, `/commit/${info.sha}`),
    commit: {
      message: info.message,
      tree: { sha: info.tree },
      author: { name: info.author.name, email: info.author.email, date: isoFromRaw(info.author.date) },
      committer: {
        name: info.committer.name,
        email: info.committer.email,
        date: isoFromRaw(info.committer.date),
      },
    },
    parents: info.parents.map((sha) => ({ sha, url: core.apiUrl(repo, `/commits/${sha}`) })),
  };
}

export function refJson(core: Core, repo: RepoState, branch: string, sha: string): JsonObject {
  return {
    ref: `refs/heads/${branch}`,
    node_id: `REF_${branch}`,
    url: core.apiUrl(repo, `/git/refs/heads/${branch}`),
    object: { sha, type: 'commit', url: core.apiUrl(repo, `/git/commits/${sha}`) },
  };
}

/** Branch name of a ref given as `refs/heads/x`; 422 for anything else. */
export function branchOfRef(ref: string): string {
  const branch = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
  if (branch === null || !isBranchName(branch)) {
    throw new HttpError(422, "Reference name must start with 'refs/' and have at least two slashes.");
  }
  return branch;
}

/** The commit a ref (branch or sha) names, or 404 with message. */
export async function resolveOr404(repo: RepoState, ref: string, message = 'Not Found'): Promise<string> {
  const sha = await repo.git.resolveRef(ref);
  if (sha === null) throw new HttpError(404, message);
  return sha;
}

/** Contexts required on a branch by branch protection and rulesets (only enforced ones when enforcedOnly). */
export function requiredContexts(repo: RepoState, branch: string, enforcedOnly = false): string[] {
  const found = new Set<string>();
  const protection = repo.protection.get(branch);
  if (protection && (!enforcedOnly || protection.enforce)) for (const c of protection.contexts) found.add(c);
  for (const rule of repo.rulesets) {
    if (globMatch(rule.branch, branch) && (!enforcedOnly || rule.enforce)) {
      for (const c of rule.contexts) found.add(c);
    }
  }
  return [...found];
}

export function globMatch(glob: string, value: string): boolean {
  const source = glob
    .split('*')
    .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]*');
  return new RegExp(`^${source}$`).test(value);
}

/** How a required context stands at a commit: its latest status, or its latest check run. */
export function contextState(
  repo: RepoState,
  sha: string,
  context: string,
): 'success' | 'failing' | 'expected' {
  const status = repo.statuses.filter((s) => s.sha === sha && s.context === context).at(-1);
  const run = [...repo.checkRuns.values()].filter((r) => r.headSha === sha && r.name === context).at(-1);
  if (status?.state === 'success') return 'success';
  if (run?.status === 'completed' && ['success', 'neutral', 'skipped'].includes(run.conclusion ?? '')) {
    return 'success';
  }
  if (status?.state === 'failure' || status?.state === 'error') return 'failing';
  if (run?.status === 'completed') return 'failing';
  return 'expected';
}

/** The first enforced required context that is not green at sha, as GitHub words it, or null. */
export function contextProblem(repo: RepoState, branch: string, sha: string): string | null {
  for (const context of requiredContexts(repo, branch, true)) {
    const state = contextState(repo, sha, context);
    if (state !== 'success') return `Required status check "${context}" is ${state}.`;
  }
  return null;
}

export interface MoveOptions {
  pusher: string;
  /** Skip protection checks (the simulator's own pushes, PR merges that were checked already). */
  bypassProtection?: boolean;
}

/**
 * Move a branch with compare-and-swap (next null deletes it), then tell the world: a push webhook, and for
 * open PRs whose head is this branch a synchronize (or, when deleted, closing them). Returns false when the
 * branch was not at expected (nothing changed).
 */
export async function moveBranch(
  core: Core,
  tx: Tx,
  repo: RepoState,
  branch: string,
  next: string | null,
  expected: string | null,
  opts: MoveOptions,
): Promise<boolean> {
  if (!opts.bypassProtection && next !== null && expected !== null) {
    const problem = contextProblem(repo, branch, next);
    if (problem)
      throw new HttpError(422, `Protected branch update failed for refs/heads/${branch}.\n\n${problem}`);
  }
  if (!(await repo.git.setBranch(branch, next, expected))) return false;
  const forced = expected !== null && next !== null && !(await repo.git.isAncestor(expected, next));
  const commits =
    expected !== null && next !== null && !forced ? await pushedCommits(repo, expected, next) : [];
  core.emit(
    tx,
    repo,
    'push',
    {
      ref: `refs/heads/${branch}`,
      before: expected ?? ZERO_SHA,
      after: next ?? ZERO_SHA,
      created: expected === null,
      deleted: next === null,
      forced,
      base_ref: null,
      compare: core.htmlUrl(
        repo,
        `/compare/${(expected ?? ZERO_SHA).slice(0, 12)}...${(next ?? ZERO_SHA).slice(0, 12)}`,
      ),
      commits,
      head_commit: commits.at(-1) ?? null,
      pusher: { name: opts.pusher },
    },
    opts.pusher,
  );
  for (const pr of repo.pulls.values()) {
    if (pr.state !== 'open' || pr.headRef !== branch) continue;
    const now = isoNow();
    pr.updatedAt = now;
    if (next === null) {
      pr.state = 'closed';
      pr.closedAt = now;
      await emitPull(core, tx, repo, pr, 'closed', opts.pusher);
    } else {
      const before = pr.headSha;
      pr.headSha = next;
      await emitPull(core, tx, repo, pr, 'synchronize', opts.pusher, { before, after: next });
    }
  }
  return true;
}

async function pushedCommits(repo: RepoState, before: string, after: string): Promise<JsonObject[]> {
  const commits = (await repo.git.commitsBetween(before, after)).slice(-20);
  const out: JsonObject[] = [];
  for (const [sha] of commits) {
    if (sha === undefined) continue;
    const info = await repo.git.commitInfo(sha);
    out.push({
      id: sha,
      message: info.message,
      author: { name: info.author.name, email: info.author.email },
      timestamp: isoFromRaw(info.author.date),
    });
  }
  return out;
}

/**
 * POST /merges: merge head (branch or sha) into branch base with a merge commit. Returns the new commit, or
 * null when head is already contained. 404 when either is missing, 409 on conflict.
 */
export async function mergeIntoBranch(
  core: Core,
  tx: Tx,
  repo: RepoState,
  base: string,
  head: string,
  message: string | null,
  actor: string,
): Promise<string | null> {
  const baseSha = await repo.git.branch(base);
  if (baseSha === null) throw new HttpError(404, 'Base does not exist');
  const headSha = await repo.git.resolveRef(head);
  if (headSha === null) throw new HttpError(404, 'Head does not exist');
  if (await repo.git.isAncestor(headSha, baseSha)) return null;
  const merged = await repo.git.mergeTree(baseSha, headSha);
  if (!merged.clean) throw new HttpError(409, 'Merge conflict');
  const sha = await repo.git.commitTree(
    merged.tree,
    [baseSha, headSha],
    message ?? `Merge ${head} into ${base}`,
    authorFor(actor),
  );
  if (!(await moveBranch(core, tx, repo, base, sha, baseSha, { pusher: actor, bypassProtection: true }))) {
    throw new HttpError(409, 'Reference update failed (the base branch moved meanwhile)');
  }
  return sha;
}
