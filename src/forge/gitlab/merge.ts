import type { ForgeRepo, MergeInput, MergeOutcome } from '../../app/ports.ts';
import { statusOf } from './client.ts';
import type { GitLabForge } from './forge.ts';
import type { GlMergeRequest } from './merge-requests.ts';
import { projectPath } from './project.ts';

/**
 * Merges through the merge API with `sha` = the tested head, so GitLab refuses (409) a head that
 * moved. With expectedTargetSha, the target is read first and a target elsewhere is refused
 * (targetMovedTo), as the API cannot make the merge conditional on it.
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
  const title = input.prTitle.replace(/\s+/g, ' ').trim();
  const path = `${projectPath(repo)}/merge_requests/${input.prNumber}/merge`;
  const squash = input.method === 'squash';
  try {
    const res = await forge.client.request<GlMergeRequest>(
      'PUT',
      path,
      {
        sha: input.headSha,
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
    return { ok: true, newTargetSha: sha ?? (await requireHead(forge, repo, input.targetBranch)) };
  } catch (error) {
    const status = statusOf(error);
    const done = await mergedAlready(forge, repo, input);
    if (done !== null) return done;
    if (status === 404) return { ok: false, reason: `merge request !${input.prNumber} not found` };
    if (status === 409) {
      return {
        ok: false,
        reason: `the head of !${input.prNumber} is no longer ${input.headSha} (GitLab: ${(error as Error).message}); not merged`,
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
  if (mr.sha !== input.headSha) {
    return { ok: false, reason: `!${input.prNumber} was merged at ${mr.sha}, not at ${input.headSha}` };
  }
  const sha = mr.merge_commit_sha ?? mr.squash_commit_sha ?? null;
  return { ok: true, newTargetSha: sha ?? (await requireHead(forge, repo, input.targetBranch)) };
}
