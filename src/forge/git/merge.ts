import type { MergeMethod } from '../../domain/queue/types.ts';
import { type GitContext, gitOut } from './git.ts';
import { assertSha, branchRef } from './names.ts';
import {
  commitInfo,
  commitsBetween,
  commitTree,
  describeFailure,
  isAncestor,
  mergeTrees,
  rawDate,
} from './objects.ts';
import { rebaseCommits } from './rebase.ts';
import { casBranch, peel } from './repos.ts';

export interface MergeRequest {
  targetBranch: string;
  prNumber: number;
  prTitle: string;
  /** The PR head to merge (the engine's expectedHeadSha). */
  headSha: string;
  /**
   * Refuse unless the target is at this commit (the tip the PR was tested on), answering targetMovedTo;
   * a PR that already landed right on top of it (a repeated merge whose answer was lost) is a success.
   * Without it, whatever the target is at when we start.
   */
  expectedTargetSha?: string | undefined;
  method: MergeMethod;
}

/** Outcome of merging a pull request into its target branch. */
export type MergeResult =
  /** The target branch now points at newTargetSha (unchanged when the PR was already contained). */
  | { ok: true; newTargetSha: string }
  /**
   * Nothing changed: conflict, target moved, unknown head, merge commits under rebase, … targetMovedTo:
   * only because the target is at that commit instead of expectedTargetSha.
   */
  | { ok: false; reason: string; targetMovedTo?: string };

/** The new target commit, computed but not yet published. */
export type PreparedMerge =
  /** newSha should replace targetSha on the branch (equal when there is nothing to do). */
  | { ok: true; targetSha: string; newSha: string }
  /** The merge cannot be made; reason says why (targetMovedTo: the target is not at expectedTargetSha). */
  | { ok: false; reason: string; targetMovedTo?: string };

/** Merge a PR: compute the new commit(s), then move the target with compare-and-swap so a concurrent push wins. */
export async function mergePullRequest(ctx: GitContext, req: MergeRequest): Promise<MergeResult> {
  const prepared = await prepareMerge(ctx, req);
  if (!prepared.ok) return prepared;
  if (prepared.newSha === prepared.targetSha) return { ok: true, newTargetSha: prepared.targetSha };
  const moved = await casBranch(ctx, req.targetBranch, prepared.newSha, prepared.targetSha);
  if (!moved.ok) {
    const reason = `PR #${req.prNumber} not merged: ${moved.reason}`;
    // A push between reading the target and moving it: with an expected tip, that is the target moving.
    const movedTo = req.expectedTargetSha !== undefined ? moved.movedTo : null;
    return movedTo !== null ? { ok: false, reason, targetMovedTo: movedTo } : { ok: false, reason };
  }
  return { ok: true, newTargetSha: prepared.newSha };
}

/** Compute the commit the target should move to, without touching any ref. */
export async function prepareMerge(ctx: GitContext, req: MergeRequest): Promise<PreparedMerge> {
  const ref = await branchRef(ctx, req.targetBranch);
  assertSha(req.headSha, `head of PR #${req.prNumber}`);
  if (req.expectedTargetSha !== undefined) assertSha(req.expectedTargetSha, 'expectedTargetSha');
  const targetSha = await peel(ctx, ref);
  if (targetSha === null) return { ok: false, reason: `target branch ${req.targetBranch} does not exist` };
  if (req.expectedTargetSha !== undefined && targetSha !== req.expectedTargetSha) {
    const landed = await landedOn(ctx, req, req.expectedTargetSha, targetSha);
    // Our own merge, done before and not recorded: the PR's commit(s) sit right on the expected tip.
    // The answer is that commit, not the tip now (a push after it is the queue's to notice).
    if (landed !== null) return { ok: true, targetSha: landed, newSha: landed };
    return {
      ok: false,
      reason: `${req.targetBranch} is at ${targetSha}, expected ${req.expectedTargetSha}`,
      targetMovedTo: targetSha,
    };
  }
  if ((await peel(ctx, req.headSha)) === null) {
    return { ok: false, reason: `head ${req.headSha} of PR #${req.prNumber} is not in the repository` };
  }
  if (await isAncestor(ctx, req.headSha, targetSha)) return { ok: true, targetSha, newSha: targetSha };
  const now = rawDate(Date.now() / 1000);
  const newSha = await newCommit(ctx, req, targetSha, now);
  return typeof newSha === 'string' ? { ok: true, targetSha, newSha } : newSha;
}

/**
 * The commit by which this PR already landed directly on `expected` (on the target's first-parent
 * chain up to `tip`), or null. merge_commit: the commit whose parents are [expected, head]; squash and
 * rebase: the commit one (squash) or as many as the PR has commits (rebase) after expected, holding
 * exactly the tree that merging the head onto expected gives.
 */
async function landedOn(
  ctx: GitContext,
  req: MergeRequest,
  expected: string,
  tip: string,
): Promise<string | null> {
  if ((await peel(ctx, expected)) === null || (await peel(ctx, req.headSha)) === null) return null;
  if (!(await isAncestor(ctx, expected, tip))) return null;
  const chain = await firstParentsAfter(ctx, expected, tip);
  const steps = req.method === 'rebase' ? (await commitsBetween(ctx, expected, req.headSha)).length : 1;
  const candidate = steps > 0 ? chain[steps - 1] : undefined;
  if (candidate === undefined) return null;
  const info = await commitInfo(ctx, candidate);
  if (req.method === 'merge_commit') {
    return info.parents.length === 2 && info.parents[1] === req.headSha ? candidate : null;
  }
  const merged = await mergeTrees(ctx, expected, req.headSha);
  return merged.clean && merged.tree === info.tree ? candidate : null;
}

/** Commits on tip's first-parent chain after base, oldest first (base must be on that chain). */
async function firstParentsAfter(ctx: GitContext, base: string, tip: string): Promise<string[]> {
  const out = await gitOut(ctx, [
    'rev-list',
    '--first-parent',
    '--reverse',
    '--max-count=1000',
    `${base}..${tip}`,
    '--',
  ]);
  const chain = out === '' ? [] : out.split('\n');
  // The oldest must sit directly on base (as first parent), or base is not on the target's own line.
  const first = chain[0];
  if (first === undefined || (await commitInfo(ctx, first)).parents[0] !== base) return [];
  return chain;
}

async function newCommit(
  ctx: GitContext,
  req: MergeRequest,
  targetSha: string,
  now: string,
): Promise<string | { ok: false; reason: string }> {
  if (req.method === 'rebase') {
    const commits = await commitsBetween(ctx, targetSha, req.headSha);
    const rebased = await rebaseCommits(ctx, targetSha, commits, now);
    return rebased.ok ? rebased.sha : { ok: false, reason: `PR #${req.prNumber}: ${rebased.reason}` };
  }
  const merged = await mergeTrees(ctx, targetSha, req.headSha);
  if (!merged.clean) return { ok: false, reason: `PR #${req.prNumber}: ${describeFailure(merged)}` };
  const title = oneLine(req.prTitle);
  if (req.method === 'merge_commit') {
    const message = `Merge pull request #${req.prNumber}: ${title}`;
    return commitTree(ctx, merged.tree, [targetSha, req.headSha], message, { committerDate: now });
  }
  // A squash that changes nothing: the target has the PR's changes already, e.g. this same squash landed
  // and the process died before the queue recorded it. Squashing again would add an empty duplicate.
  if (merged.tree === (await commitInfo(ctx, targetSha)).tree) return targetSha;
  const head = await commitInfo(ctx, req.headSha);
  const message = `${title} (#${req.prNumber})${await squashBody(ctx, targetSha, req.headSha)}`;
  return commitTree(ctx, merged.tree, [targetSha], message, { author: head.author, committerDate: now });
}

/** "\n\n* subject" for each squashed commit, oldest first. */
async function squashBody(ctx: GitContext, targetSha: string, headSha: string): Promise<string> {
  const subjects: string[] = [];
  for (const [sha] of await commitsBetween(ctx, targetSha, headSha)) {
    if (sha) subjects.push(`* ${(await commitInfo(ctx, sha)).message.split('\n')[0] ?? ''}`);
  }
  return subjects.length > 0 ? `\n\n${subjects.join('\n')}` : '';
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
