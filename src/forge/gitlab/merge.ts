import type { ForgeRepo, MergeInput, MergeOutcome } from '../../app/ports.ts';
import { statusOf, unless } from './client.ts';
import type { GitLabForge } from './forge.ts';
import type { GlMergeRequest } from './merge-requests.ts';
import { projectPath } from './project.ts';

/**
 * Merges through the merge API with `sha` = the tested head, so GitLab refuses (409) a head that
 * moved. With expectedTargetSha, the target is read first and a target elsewhere is refused
 * (targetMovedTo), as the API cannot make the merge conditional on it. In a fast-forward or
 * semi-linear project a merge request behind the target is first rebased on it as it was tested and
 * pushed to its source branch with a lease on the head the queue saw (test-branches.ts), and that
 * rebased head is the `sha` merged. Where GitLab wants the rebased head's own pipeline to succeed
 * ("Pipelines must succeed", skipped pipelines not counted), that head is pushed without `ci.skip` and
 * merged when its pipeline succeeds (mergeOnPipeline): the answer is 'pending' until GitLab reports
 * it merged at that SHA.
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
      await withdraw(forge, repo, input);
      return {
        ok: false,
        reason: `${input.targetBranch} moved to ${tip} (!${input.prNumber} was tested on ${input.expectedTargetSha}); not merged`,
        targetMovedTo: tip,
      };
    }
  }
  const settings = await forge.projectSettings(repo);
  const method = settings.merge_method ?? 'merge';
  // GitLab merges only a head whose own pipeline succeeded, and a push with ci.skip makes a skipped one.
  const ownPipeline =
    settings.only_allow_merge_if_pipeline_succeeds === true &&
    settings.allow_merge_on_skipped_pipeline !== true;
  let headSha = input.headSha;
  if (method === 'ff' || method === 'rebase_merge') {
    const onto = input.expectedTargetSha ?? (await forge.head(repo, input.targetBranch));
    if (onto === null) return { ok: false, reason: `target branch ${input.targetBranch} does not exist` };
    const head = await forge.linearMergeHead(repo, {
      iid: input.prNumber,
      headSha,
      onto,
      method,
      ciSkip: !ownPipeline,
    });
    if (!head.ok) {
      const done = await mergedAlready(forge, repo, input);
      return done ?? { ok: false, reason: head.reason };
    }
    headSha = head.sha;
    if (ownPipeline && headSha !== input.headSha) return mergeOnPipeline(forge, repo, input, headSha);
  }
  try {
    const mr = await putMerge(forge, repo, input, headSha, false);
    return await merged(forge, repo, input, headSha, mr);
  } catch (error) {
    return refused(forge, repo, input, headSha, error);
  }
}

/** PUT …/merge of headSha (auto: merge when its pipeline succeeds, GitLab's auto-merge). */
async function putMerge(
  forge: GitLabForge,
  repo: ForgeRepo,
  input: MergeInput,
  headSha: string,
  auto: boolean,
): Promise<GlMergeRequest> {
  const title = input.prTitle.replace(/\s+/g, ' ').trim();
  const path = `${projectPath(repo)}/merge_requests/${input.prNumber}/merge`;
  const squash = input.method === 'squash';
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
      // GitLab 17 calls it auto_merge; each version ignores the name it does not know.
      ...(auto ? { merge_when_pipeline_succeeds: true, auto_merge: true } : {}),
    },
    { retry: false },
  );
  return res.data;
}

/** The outcome of a merge GitLab answered as done. */
async function merged(
  forge: GitLabForge,
  repo: ForgeRepo,
  input: MergeInput,
  headSha: string,
  mr: GlMergeRequest,
): Promise<MergeOutcome> {
  const sha = mr.merge_commit_sha ?? mr.squash_commit_sha ?? null;
  if (headSha !== input.headSha) await forge.forgetTested(repo, input.prNumber);
  return { ok: true, newTargetSha: sha ?? (await requireHead(forge, repo, input.targetBranch)) };
}

/** The outcome of a merge call GitLab refused (or whose answer was lost after merging). */
async function refused(
  forge: GitLabForge,
  repo: ForgeRepo,
  input: MergeInput,
  headSha: string,
  error: unknown,
): Promise<MergeOutcome> {
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

/** Pipeline statuses after which GitLab will not merge the head on its own. */
const PIPELINE_ENDED = new Set(['failed', 'canceled', 'skipped', 'manual']);

/**
 * "Pipelines must succeed" without skipped pipelines counting: the rebased head, pushed without
 * ci.skip, is merged when its own pipeline on the source branch succeeds (GitLab's auto-merge, with
 * `sha` so no other head is merged). Each call looks at where GitLab is: merged at that SHA → ok; the
 * pipeline still running with auto-merge set → 'pending'; the pipeline over without success, the head
 * moved, or auto-merge cancelled on GitLab after Mainline set it → ok:false (auto-merge withdrawn).
 * The pipeline succeeded already → merged at once. Never ok without GitLab saying merged at headSha.
 */
async function mergeOnPipeline(
  forge: GitLabForge,
  repo: ForgeRepo,
  input: MergeInput,
  headSha: string,
): Promise<MergeOutcome> {
  const iid = input.prNumber;
  const mr = await forge.mergeRequest(repo, iid);
  if (mr === null) return { ok: false, reason: `merge request !${iid} not found` };
  if (mr.state === 'locked') return { ok: 'pending', reason: `GitLab is merging !${iid}` };
  if (mr.state !== 'opened') {
    const done = await mergedAlready(forge, repo, input);
    return done ?? { ok: false, reason: `!${iid} was ${mr.state} on GitLab; not merged` };
  }
  const fail = async (reason: string): Promise<MergeOutcome> => {
    if (mr.merge_when_pipeline_succeeds === true) await cancelAutoMerge(forge, repo, iid);
    return { ok: false, reason };
  };
  if (mr.sha !== headSha) return fail(`the head of !${iid} moved to ${mr.sha} after the rebase; not merged`);
  const pipeline = mr.head_pipeline?.sha === headSha ? (mr.head_pipeline.status ?? null) : null;
  const where = `the pipeline of ${headSha.slice(0, 12)} on ${mr.source_branch}`;
  if (pipeline !== null && PIPELINE_ENDED.has(pipeline)) {
    return fail(`${where} ended ${pipeline}, and GitLab merges only after it succeeds; not merged`);
  }
  const waiting = `GitLab merges !${iid} at ${headSha} when ${where} succeeds`;
  if (mr.merge_when_pipeline_succeeds === true && input.finalAttempt !== true) {
    return { ok: 'pending', reason: `${waiting} (${pipeline ?? 'not created yet'})` };
  }
  if (pipeline !== 'success') {
    if (input.finalAttempt === true) {
      return fail(`${where} did not succeed in time (${pipeline ?? 'not created'}); not merged`);
    }
    if (pipeline !== null && (await forge.autoMergeAsked(repo, iid, headSha))) {
      return fail(`auto-merge of !${iid} was cancelled on GitLab while ${where} ran; not merged`);
    }
  }
  try {
    const answer = await putMerge(forge, repo, input, headSha, true);
    if (answer.state === 'merged') return await merged(forge, repo, input, headSha, answer);
    await forge.markAutoMerge(repo, iid, headSha);
    return { ok: 'pending', reason: waiting };
  } catch (error) {
    const status = statusOf(error);
    // Just pushed: GitLab has not made the head's pipeline yet, so it neither merges nor auto-merges.
    if ((status === 405 || status === 422) && pipeline === null && input.finalAttempt !== true) {
      const done = await mergedAlready(forge, repo, input);
      if (done !== null) return done;
      return { ok: 'pending', reason: `waiting for GitLab to create ${where}` };
    }
    return refused(forge, repo, input, headSha, error);
  }
}

/**
 * The target moved before GitLab merged: an auto-merge Mainline set is withdrawn and the rebased head
 * it pushed replaced by the queued head again, so the queue tests that head on the new target.
 */
async function withdraw(forge: GitLabForge, repo: ForgeRepo, input: MergeInput): Promise<void> {
  const mr = await forge.mergeRequest(repo, input.prNumber);
  if (mr === null || mr.state !== 'opened' || mr.sha === input.headSha) return;
  if (mr.merge_when_pipeline_succeeds === true) await cancelAutoMerge(forge, repo, input.prNumber);
  await forge.restoreQueuedHead(repo, mr, input.headSha);
}

/** Withdraws GitLab's auto-merge of a merge request (it may be off already). */
async function cancelAutoMerge(forge: GitLabForge, repo: ForgeRepo, iid: number): Promise<void> {
  const path = `${projectPath(repo)}/merge_requests/${iid}/cancel_merge_when_pipeline_succeeds`;
  await unless([404, 405, 406], null, () => forge.client.request('POST', path, {}, { retry: false }));
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
