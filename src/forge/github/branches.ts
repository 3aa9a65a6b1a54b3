/**
 * The branch and pull request calls the forge's methods are built from: reading and placing a branch,
 * reading a PR, and the checks around a merge (is the base where the PR was tested, did it merge).
 */
import type { ForgeRepo, MergeInput, MergeOutcome } from '../../app/ports.ts';
import { type GhPull, type GhRef, messageOf, pathOf, statusOf, unless } from './api.ts';
import type { GitHubApi } from './client.ts';

export type Params = { owner: string; repo: string };

export function params(repo: ForgeRepo): Params {
  return { owner: repo.owner, repo: repo.name };
}

export async function getPull(api: GitHubApi, p: Params, number: number): Promise<GhPull | null> {
  const res = await unless([404], null, () =>
    api.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...p, pull_number: number }),
  );
  return res === null ? null : (res.data as unknown as GhPull);
}

export async function headOf(api: GitHubApi, p: Params, branch: string): Promise<string | null> {
  const route = `GET /repos/{owner}/{repo}/git/ref/heads/${pathOf(branch)}`;
  const res = await unless([404], null, () => api.request(route, p));
  return res === null ? null : (res.data as GhRef).object.sha;
}

export async function requireHead(api: GitHubApi, p: Params, branch: string): Promise<string> {
  const sha = await headOf(api, p, branch);
  if (sha === null) throw new Error(`branch ${branch} does not exist`);
  return sha;
}

/**
 * Null when the base branch is at the expected tip; otherwise the answer without merging: the PR's own
 * merge if it already happened there (a lost answer: the base moved because of it), else a refusal
 * naming where the base is now.
 */
export async function targetElsewhere(
  api: GitHubApi,
  p: Params,
  input: MergeInput,
  expected: string,
): Promise<MergeOutcome | null> {
  const tip = await headOf(api, p, input.targetBranch);
  if (tip === expected) return null;
  const done = await mergedAlready(api, p, input);
  if (done !== null) return done;
  if (tip === null) return { ok: false, reason: `target branch ${input.targetBranch} does not exist` };
  return {
    ok: false,
    reason: `${input.targetBranch} moved to ${tip} (PR #${input.prNumber} was tested on ${expected}); not merged`,
    targetMovedTo: tip,
  };
}

/** The outcome of a merge that already happened (a lost answer, a repeated action), or null when the PR is not merged. */
export async function mergedAlready(
  api: GitHubApi,
  p: Params,
  input: { targetBranch: string; prNumber: number; headSha: string },
): Promise<MergeOutcome | null> {
  const pr = await getPull(api, p, input.prNumber);
  if (pr === null || !pr.merged) return null;
  if (pr.head.sha !== input.headSha) {
    return {
      ok: false,
      reason: `PR #${input.prNumber} was merged at ${pr.head.sha}, not at ${input.headSha}`,
    };
  }
  return { ok: true, newTargetSha: pr.merge_commit_sha || (await requireHead(api, p, input.targetBranch)) };
}

/** Points refs/heads/<branch> at sha, creating it or forcing it; the reason when GitHub refuses, else null. */
export async function placeBranch(
  api: GitHubApi,
  p: Params,
  branch: string,
  sha: string,
): Promise<string | null> {
  const created = await unless([422], false, async () => {
    await api.request('POST /repos/{owner}/{repo}/git/refs', { ...p, ref: `refs/heads/${branch}`, sha });
    return true;
  });
  if (created) return null;
  try {
    await api.request(`PATCH /repos/{owner}/{repo}/git/refs/heads/${pathOf(branch)}`, {
      ...p,
      sha,
      force: true,
    });
    return null;
  } catch (err) {
    if (statusOf(err) === 422) return `cannot point ${branch} at ${sha}: ${messageOf(err)}`;
    throw err;
  }
}
