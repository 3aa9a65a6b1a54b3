import { authorFor } from './git.ts';
import { HttpError } from './http.ts';
import { contextProblem, moveBranch } from './ops-git.ts';
import { labelsJson } from './ops-labels.ts';
import { type Core, collaboratorOf, isoNow, type RepoState, type Tx, userJson } from './state.ts';
import type { CommentState, JsonObject, MergeMethod, PullState } from './types.ts';

/**
 * How `mergeable` is filled in: webhooks carry null (as GitHub's mostly do); REST reads compute it from a
 * trial merge of the head into the base (and use up the "still computing" reads a test asked for); peek
 * computes it without using them up (the test driver's view).
 */
export type MergeableMode = 'webhook' | 'rest' | 'peek';

/** A pull request as the REST API shows it. */
export async function pullJson(
  core: Core,
  repo: RepoState,
  pr: PullState,
  mode: MergeableMode = 'webhook',
): Promise<JsonObject> {
  const { mergeable, state } =
    mode === 'webhook'
      ? { mergeable: null, state: 'unknown' }
      : await mergeability(repo, pr, mode === 'rest');
  const baseSha = (await repo.git.branch(pr.baseRef)) ?? pr.headSha;
  const side = (ref: string, sha: string) => ({
    label: `${repo.owner}:${ref}`,
    ref,
    sha,
    user: userJson(repo.owner),
    repo: core.repoJson(repo),
  });
  return {
    id: pr.id,
    node_id: `PR_${pr.id}`,
    number: pr.number,
    url: core.apiUrl(repo, `/pulls/${pr.number}`),
    html_url: core.htmlUrl(repo, `/pull/${pr.number}`),
    issue_url: core.apiUrl(repo, `/issues/${pr.number}`),
    state: pr.state,
    locked: false,
    title: pr.title,
    body: pr.body,
    draft: pr.draft,
    user: userJson(pr.author),
    labels: labelsJson(core, repo, pr),
    head: side(pr.headRef, pr.headSha),
    base: side(pr.baseRef, baseSha),
    merged: pr.merged,
    mergeable,
    mergeable_state: state,
    merged_at: pr.mergedAt,
    merged_by: pr.mergedBy === null ? null : userJson(pr.mergedBy),
    merge_commit_sha: pr.mergeCommitSha,
    closed_at: pr.closedAt,
    created_at: pr.createdAt,
    updated_at: pr.updatedAt,
  };
}

async function mergeability(
  repo: RepoState,
  pr: PullState,
  consume: boolean,
): Promise<{ mergeable: boolean | null; state: string }> {
  if (pr.state !== 'open') return { mergeable: null, state: 'unknown' };
  if (pr.mergeableUnknownReads > 0) {
    if (consume) pr.mergeableUnknownReads--;
    return { mergeable: null, state: 'unknown' };
  }
  const baseSha = await repo.git.branch(pr.baseRef);
  if (baseSha === null) return { mergeable: false, state: 'dirty' };
  const clean =
    (await repo.git.isAncestor(pr.headSha, baseSha)) || (await repo.git.mergeTree(baseSha, pr.headSha)).clean;
  if (!clean) return { mergeable: false, state: 'dirty' };
  if (pr.draft) return { mergeable: true, state: 'draft' };
  if (contextProblem(repo, pr.baseRef, pr.headSha) !== null) return { mergeable: true, state: 'blocked' };
  if (repo.protection.get(pr.baseRef)?.strict && !(await repo.git.isAncestor(baseSha, pr.headSha))) {
    return { mergeable: true, state: 'behind' };
  }
  return { mergeable: true, state: 'clean' };
}

export function findPull(repo: RepoState, number: number): PullState {
  const pr = repo.pulls.get(number);
  if (!pr) throw new HttpError(404, 'Not Found');
  return pr;
}

function validationFailed(field: string, message?: string): HttpError {
  return new HttpError(422, 'Validation Failed', {
    errors: [{ resource: 'PullRequest', field, code: 'invalid', ...(message ? { message } : {}) }],
  });
}

export interface OpenPull {
  head: string;
  base: string;
  title: string;
  body: string | null;
  draft: boolean;
  author: string;
}

export async function openPull(core: Core, tx: Tx, repo: RepoState, req: OpenPull): Promise<PullState> {
  const colon = req.head.indexOf(':');
  if (colon >= 0 && req.head.slice(0, colon).toLowerCase() !== repo.owner.toLowerCase()) {
    throw validationFailed('head');
  }
  const head = colon >= 0 ? req.head.slice(colon + 1) : req.head;
  const headSha = await repo.git.branch(head);
  if (headSha === null) throw validationFailed('head');
  const baseSha = await repo.git.branch(req.base);
  if (baseSha === null) throw validationFailed('base');
  for (const pr of repo.pulls.values()) {
    if (pr.state === 'open' && pr.headRef === head && pr.baseRef === req.base) {
      throw validationFailed('head', `A pull request already exists for ${repo.owner}:${head}.`);
    }
  }
  if (await repo.git.isAncestor(headSha, baseSha)) {
    throw validationFailed('head', `No commits between ${req.base} and ${head}`);
  }
  const now = isoNow();
  const pr: PullState = {
    id: core.nextId(),
    number: repo.nextNumber++,
    title: req.title,
    body: req.body,
    author: req.author,
    headRef: head,
    headSha,
    baseRef: req.base,
    draft: req.draft,
    state: 'open',
    merged: false,
    mergedAt: null,
    mergedBy: null,
    mergeCommitSha: null,
    closedAt: null,
    createdAt: now,
    updatedAt: now,
    mergeableUnknownReads: 0,
  };
  repo.pulls.set(pr.number, pr);
  await emitPull(core, tx, repo, pr, 'opened', req.author);
  return pr;
}

export async function emitPull(
  core: Core,
  tx: Tx,
  repo: RepoState,
  pr: PullState,
  action: string,
  sender: string,
  extra: JsonObject = {},
): Promise<void> {
  const payload = { action, number: pr.number, ...extra, pull_request: await pullJson(core, repo, pr) };
  core.emit(tx, repo, 'pull_request', payload, sender);
}

export async function closePull(core: Core, tx: Tx, repo: RepoState, pr: PullState, actor: string) {
  if (pr.state === 'closed') return;
  pr.state = 'closed';
  pr.closedAt = pr.updatedAt = isoNow();
  await emitPull(core, tx, repo, pr, 'closed', actor);
}

export async function reopenPull(core: Core, tx: Tx, repo: RepoState, pr: PullState, actor: string) {
  if (pr.state === 'open') return;
  if (pr.merged) throw new HttpError(422, 'Validation Failed: cannot reopen a merged pull request');
  const head = await repo.git.branch(pr.headRef);
  if (head === null) throw validationFailed('state', 'state cannot be changed. The head branch was deleted.');
  pr.headSha = head;
  pr.state = 'open';
  pr.closedAt = null;
  pr.updatedAt = isoNow();
  await emitPull(core, tx, repo, pr, 'reopened', actor);
}

export interface MergeRequest {
  method: MergeMethod;
  sha: string | null;
  title: string | null;
  message: string | null;
}

/** PUT /pulls/{n}/merge. Returns the commit the base branch now points at. */
export async function mergePull(
  core: Core,
  tx: Tx,
  repo: RepoState,
  pr: PullState,
  req: MergeRequest,
  actor: string,
): Promise<string> {
  const notMergeable = () => new HttpError(405, 'Pull Request is not mergeable');
  if (pr.state !== 'open') throw notMergeable();
  if (req.sha !== null && req.sha !== pr.headSha) {
    throw new HttpError(409, 'Head branch was modified. Review and try the merge again.');
  }
  const baseSha = await repo.git.branch(pr.baseRef);
  if (baseSha === null) throw notMergeable();
  const problem = contextProblem(repo, pr.baseRef, pr.headSha);
  if (problem !== null) throw new HttpError(405, problem);
  const protection = repo.protection.get(pr.baseRef);
  if (protection?.strict && protection.enforce && !(await repo.git.isAncestor(baseSha, pr.headSha))) {
    throw new HttpError(405, 'Head branch is not up to date with the base branch.');
  }
  let newSha = baseSha;
  if (!(await repo.git.isAncestor(pr.headSha, baseSha))) {
    newSha = await newBaseCommit(repo, pr, req, baseSha, actor);
    const moved = await moveBranch(core, tx, repo, pr.baseRef, newSha, baseSha, {
      pusher: actor,
      bypassProtection: true,
    });
    if (!moved) throw new HttpError(409, 'Base branch was modified. Review and try the merge again.');
  }
  const now = isoNow();
  Object.assign(pr, {
    state: 'closed',
    merged: true,
    mergedAt: now,
    mergedBy: actor,
    mergeCommitSha: newSha,
    closedAt: now,
    updatedAt: now,
  });
  await emitPull(core, tx, repo, pr, 'closed', actor);
  return newSha;
}

async function newBaseCommit(
  repo: RepoState,
  pr: PullState,
  req: MergeRequest,
  baseSha: string,
  actor: string,
): Promise<string> {
  const git = repo.git;
  if (req.method === 'rebase') {
    const commits = await git.commitsBetween(baseSha, pr.headSha);
    const replayed = commits.some((c) => c.length !== 2) ? null : await git.replay(baseSha, commits);
    if (replayed === null || !replayed.ok) throw new HttpError(405, "This branch can't be rebased");
    return replayed.sha;
  }
  const merged = await git.mergeTree(baseSha, pr.headSha);
  if (!merged.clean) throw new HttpError(405, 'Pull Request is not mergeable');
  if (req.method === 'merge') {
    const title = req.title ?? `Merge pull request #${pr.number} from ${repo.owner}/${pr.headRef}`;
    const message = `${title}\n\n${req.message ?? pr.title}`;
    return git.commitTree(merged.tree, [baseSha, pr.headSha], message, authorFor(actor));
  }
  const subjects: string[] = [];
  for (const [sha] of await git.commitsBetween(baseSha, pr.headSha)) {
    if (sha) subjects.push(`* ${(await git.commitInfo(sha)).message.split('\n')[0] ?? ''}`);
  }
  const title = req.title ?? `${pr.title} (#${pr.number})`;
  const message = `${title}\n\n${req.message ?? subjects.join('\n')}`.trimEnd();
  return git.commitTree(merged.tree, [baseSha], message, authorFor(pr.author));
}

export function commentJson(core: Core, repo: RepoState, c: CommentState): JsonObject {
  return {
    id: c.id,
    node_id: `IC_${c.id}`,
    body: c.body,
    user: userJson(c.user),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    url: core.apiUrl(repo, `/issues/comments/${c.id}`),
    html_url: core.htmlUrl(repo, `/pull/${c.issue}#issuecomment-${c.id}`),
    issue_url: core.apiUrl(repo, `/issues/${c.issue}`),
    author_association: collaboratorOf(repo, c.user).association,
  };
}

function issueJson(core: Core, repo: RepoState, pr: PullState): JsonObject {
  return {
    number: pr.number,
    title: pr.title,
    state: pr.state,
    user: userJson(pr.author),
    html_url: core.htmlUrl(repo, `/pull/${pr.number}`),
    url: core.apiUrl(repo, `/issues/${pr.number}`),
    pull_request: {
      url: core.apiUrl(repo, `/pulls/${pr.number}`),
      html_url: core.htmlUrl(repo, `/pull/${pr.number}`),
    },
  };
}

export function addComment(core: Core, tx: Tx, repo: RepoState, number: number, body: string, user: string) {
  const pr = findPull(repo, number);
  const now = isoNow();
  const comment: CommentState = {
    id: core.nextId(),
    issue: number,
    body,
    user,
    createdAt: now,
    updatedAt: now,
  };
  repo.comments.set(comment.id, comment);
  core.emit(
    tx,
    repo,
    'issue_comment',
    { action: 'created', issue: issueJson(core, repo, pr), comment: commentJson(core, repo, comment) },
    user,
  );
  return comment;
}

export function findComment(repo: RepoState, id: number): CommentState {
  const comment = repo.comments.get(id);
  if (!comment) throw new HttpError(404, 'Not Found');
  return comment;
}

export function editComment(
  core: Core,
  tx: Tx,
  repo: RepoState,
  comment: CommentState,
  body: string,
  actor: string,
) {
  const from = comment.body;
  comment.body = body;
  comment.updatedAt = isoNow();
  const pr = findPull(repo, comment.issue);
  core.emit(
    tx,
    repo,
    'issue_comment',
    {
      action: 'edited',
      changes: { body: { from } },
      issue: issueJson(core, repo, pr),
      comment: commentJson(core, repo, comment),
    },
    actor,
  );
}

export function deleteComment(core: Core, tx: Tx, repo: RepoState, comment: CommentState, actor: string) {
  repo.comments.delete(comment.id);
  const pr = findPull(repo, comment.issue);
  core.emit(
    tx,
    repo,
    'issue_comment',
    { action: 'deleted', issue: issueJson(core, repo, pr), comment: commentJson(core, repo, comment) },
    actor,
  );
}
