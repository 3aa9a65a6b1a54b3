import type { ForgeRepo, MergeInput, MergeOutcome } from '../../app/ports.ts';
import { statusOf } from './client.ts';
import type { GitLabForge } from './forge.ts';
import type { GlMergeRequest } from './merge-requests.ts';
import { projectPath } from './project.ts';

/**
 * Merges through the merge API with `sha` = the tested head, so GitLab refuses (409) a head that
 * moved. With expectedTargetSha, the target is read first and a target elsewhere is refused
 * (targetMovedTo), as the API cannot make the merge conditional on it. In a fast-forward or
 * semi-linear project a merge request behind the target is first rebased on it as it was tested and
 * pushed to its source branch with a lease on the head the queue saw (test-branches.ts), and that
 * rebased head is the `sha` merged.
 */
export async function mergeMergeRequest(
  forge: GitLabForge,
  repo: ForgeRepo,
  input: MergeInput,
): Promise<MergeOutcome> {
  if (input.expectedTargetSha !== undefined) {
    const tip = await forge.head(repo, input.targetBranch);
    if (tip !== input.expectedTargetSha) {
      const done = await mergedAlready(forge, repo, input);
      if (done !== null) return done;
      if (tip === null) return { ok: false, reason: `target branch ${input.targetBranch} does not exist` };
      return {
        ok: false,
        reason: `${input.targetBranch} moved to ${tip} (!${input.prNumber} was tested on ${input.expectedTargetSha}); not merged`,
        targetMovedTo: tip,
      };
    }
  }
  const method = (await forge.projectSettings(repo)).merge_method ?? 'merge';
  let headSha = input.headSha;
  if (method === 'ff' || method === 'rebase_merge') {
    const onto = input.expectedTargetSha ?? (await forge.head(repo, input.targetBranch));
    if (onto === null) return { ok: false, reason: `target branch ${input.targetBranch} does not exist` };
    const head = await forge.linearMergeHead(repo, { iid: input.prNumber, headSha, onto, method });
    if (!head.ok) {
      const done = await mergedAlready(forge, repo, input);
      return done ?? { ok: false, reason: head.reason };
    }
    headSha = head.sha;
  }
  const title = input.prTitle.replace(/\s+/g, ' ').trim();
  const path = `${projectPath(repo)}/merge_requests/${input.prNumber}/merge`;
  const squash = input.method === 'squash';
  try {
    const res = await forge.client.request<GlMergeRequest>(
      'PUT',
      path,
      {
        sha: headSha,
        squash,
        ...(squash ? { squash_commit_message: `${title} (!${input.prNumber})` } : {}),
        ...(input.method === 'merge_commit'
          ? { merge_commit_message: `Merge merge request !${input.prNumber}: ${title}` }
          : {}),
      },
      { retry: false },
    );
    const mr = res.data;
    const sha = mr.merge_commit_sha ?? mr.squash_commit_sha ?? null;
    if (headSha !== input.headSha) await forge.forgetTested(repo, input.prNumber);
    return { ok: true, newTargetSha: sha ?? (await requireHead(forge, repo, input.targetBranch)) };
  } catch (error) {
    const status = statusOf(error);
    const done = await mergedAlready(forge, repo, input);
    if (done !== null) return done;
    if (status === 404) return { ok: false, reason: `merge request !${input.prNumber} not found` };
    if (status === 409) {
      return {
        ok: false,
        reason: `the head of !${input.prNumber} is no longer ${headSha} (GitLab: ${(error as Error).message}); not merged`,
      };
    }
    if (status === 405 || status === 406 || status === 422 || status === 403) {
      return {
        ok: false,
        reason: `GitLab refused to merge !${input.prNumber}: ${(error as Error).message}`,
      };
    }
    throw error;
  }
}

async function requireHead(forge: GitLabForge, repo: ForgeRepo, branch: string): Promise<string> {
  const sha = await forge.head(repo, branch);
  if (sha === null) throw new Error(`branch ${branch} does not exist`);
  return sha;
}

/** The outcome of a merge that already happened (a lost answer), or null when it is not merged. */
async function mergedAlready(
  forge: GitLabForge,
  repo: ForgeRepo,
  input: MergeInput,
): Promise<MergeOutcome | null> {
  const mr = await forge.mergeRequest(repo, input.prNumber);
  if (mr === null || mr.state !== 'merged') return null;
  // In a fast-forward or semi-linear project the queue may have merged the head rebased on the
  // expected target, which is the same commit every time it is made.
  const rebased =
    mr.sha === input.headSha || input.expectedTargetSha === undefined
      ? null
      : await forge.rebasedHead(repo, input.headSha, input.expectedTargetSha, input.prNumber);
  if (mr.sha !== input.headSha && mr.sha !== rebased) {
    return { ok: false, reason: `!${input.prNumber} was merged at ${mr.sha}, not at ${input.headSha}` };
  }
  const sha = mr.merge_commit_sha ?? mr.squash_commit_sha ?? null;
  return { ok: true, newTargetSha: sha ?? (await requireHead(forge, repo, input.targetBranch)) };
}
