import type { ForgePullRequest, ForgeRepo } from '../../app/ports.ts';
import type { Mergeability } from '../../domain/queue/index.ts';
import { type GitLabClient, unless } from './client.ts';
import { projectPath } from './project.ts';

/** The parts of a GitLab merge request Mainline reads. */
export interface GlMergeRequest {
  iid: number;
  title: string;
  state: 'opened' | 'closed' | 'locked' | 'merged';
  source_branch: string;
  target_branch: string;
  source_project_id?: number;
  target_project_id?: number;
  sha: string;
  draft?: boolean;
  work_in_progress?: boolean;
  detailed_merge_status?: string;
  merge_status?: string;
  author?: { username?: string } | null;
  diff_refs?: { base_sha?: string | null; head_sha?: string | null } | null;
  merge_commit_sha?: string | null;
  squash_commit_sha?: string | null;
  /** Auto-merge is set ("merge when pipeline succeeds"). */
  merge_when_pipeline_succeeds?: boolean;
  /** The latest pipeline of the head on the source branch (single merge request reads only). */
  head_pipeline?: { id?: number; sha?: string; status?: string } | null;
  /** A fork's merge request lets members who can merge push to its branch. */
  allow_collaboration?: boolean;
}

/** detailed_merge_status values that say GitLab is still working it out. */
export const CHECKING = new Set(['unchecked', 'checking', 'preparing', 'approvals_syncing']);
/**
 * Values that only say the head's own pipeline has not passed yet (the queue waits for the required
 * statuses on the head itself), or that the merge request is behind the target in a fast-forward or
 * semi-linear project (`need_rebase`: the queue rebases what it tests), so these do not make the merge
 * request unmergeable for it.
 */
const CI_WAIT = new Set(['ci_must_pass', 'ci_still_running', 'mergeable', 'need_rebase']);

/** A merge request from a fork (its source project is not the target project). */
export function isFork(mr: GlMergeRequest): boolean {
  return (
    mr.source_project_id !== undefined &&
    mr.target_project_id !== undefined &&
    mr.source_project_id !== mr.target_project_id
  );
}

/** Approvals still missing on a merge request (0 when none are required or the API has none). */
export async function approvalsLeft(client: GitLabClient, repo: ForgeRepo, iid: number): Promise<number> {
  const path = `${projectPath(repo)}/merge_requests/${iid}/approvals`;
  const res = await unless([403, 404], null, () =>
    client.request<{ approved?: boolean; approvals_left?: number }>('GET', path),
  );
  if (res === null) return 0;
  const left = typeof res.data.approvals_left === 'number' ? res.data.approvals_left : 0;
  return res.data.approved === false ? Math.max(1, left) : Math.max(0, left);
}

export async function readMergeRequest(
  client: GitLabClient,
  repo: ForgeRepo,
  iid: number,
): Promise<GlMergeRequest | null> {
  const path = `${projectPath(repo)}/merge_requests/${iid}`;
  const res = await unless([404], null, () => client.request<GlMergeRequest>('GET', path));
  return res === null ? null : res.data;
}

/** A merge request as the queue's pull request, admitted as mergeable only once fully approved. */
export async function readPullRequest(
  client: GitLabClient,
  repo: ForgeRepo,
  number: number,
): Promise<ForgePullRequest | null> {
  const mr = await readMergeRequest(client, repo, number);
  if (mr === null) return null;
  let mergeable = mergeability(mr);
  // Approvals are read from their own endpoint too: an instance whose merge status does not count
  // them still never has an unapproved merge request admitted.
  if (mergeable === 'mergeable' && (await approvalsLeft(client, repo, number)) > 0)
    mergeable = 'not_mergeable';
  return {
    number: mr.iid,
    title: mr.title,
    author: mr.author?.username ?? '',
    headSha: mr.sha,
    headBranch: mr.source_branch,
    baseBranch: mr.target_branch,
    baseSha: mr.diff_refs?.base_sha ?? mr.sha,
    mergeability: mergeable,
    state: mr.state === 'merged' ? 'merged' : mr.state === 'opened' ? 'open' : 'closed',
  };
}

function mergeability(mr: GlMergeRequest): Mergeability {
  if (mr.draft === true || mr.work_in_progress === true || mr.state !== 'opened') return 'not_mergeable';
  const detailed = mr.detailed_merge_status;
  if (detailed !== undefined) {
    if (CI_WAIT.has(detailed)) return 'mergeable';
    return CHECKING.has(detailed) ? 'in_progress' : 'not_mergeable';
  }
  if (mr.merge_status === 'can_be_merged') return 'mergeable';
  return mr.merge_status === 'cannot_be_merged' ? 'not_mergeable' : 'in_progress';
}
