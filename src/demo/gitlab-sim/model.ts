/** The simulator's state (projects, merge requests, statuses, notes) and GitLab's JSON for it. */
import type { BareRepo } from './git.ts';

export type MergeMethod = 'merge' | 'rebase_merge' | 'ff';
export type JobStatus = 'created' | 'pending' | 'running' | 'success' | 'failed' | 'canceled' | 'skipped';
export const STATUSES: readonly string[] = ['pending', 'running', 'success', 'failed', 'canceled', 'skipped'];

export interface User {
  id: number;
  username: string;
  name: string;
}

export interface MergeRequest {
  iid: number;
  id: number;
  title: string;
  author: User;
  sourceBranch: string;
  targetBranch: string;
  state: 'opened' | 'closed' | 'merged';
  draft: boolean;
  /** Head when merged or closed (frozen); open MRs read their source branch. */
  frozenSha: string | null;
  mergeCommitSha: string | null;
  squashCommitSha: string | null;
  approvalsRequired: number;
  approvedBy: Set<number>;
  /**
   * The fork's project id when the merge request comes from a fork (its commits are in the target
   * project's refs/merge-requests/<iid>/head, as GitLab keeps them), else null.
   */
  sourceProjectId?: number | null;
  /** "Allow commits from members who can merge to the target branch" (a fork's merge request). */
  allowCollaboration?: boolean;
  /** Auto-merge ("merge when pipeline succeeds") set at this head; null: not set. */
  autoMergeSha?: string | null;
  /** The merge call's parameters auto-merge merges with. */
  autoMergeParams?: Record<string, unknown>;
}

export interface CommitStatus {
  id: number;
  sha: string;
  ref: string | null;
  name: string;
  status: JobStatus;
  targetUrl: string | null;
  description: string | null;
  allowFailure: boolean;
  pipelineId: number;
  createdAt: string;
}

export interface Note {
  id: number;
  body: string;
  author: User;
  system: boolean;
  createdAt: string;
}

/**
 * A pipeline created through POST /projects/:id/pipeline, or by a push over HTTP (without `ci.skip`)
 * to a merge request's source branch; its jobs are the commit's statuses posted after it.
 */
export interface Pipeline {
  id: number;
  sha: string;
  ref: string;
  source: 'api' | 'push';
  /** Pushed with `ci.skip`: GitLab makes a skipped pipeline, which no job joins. */
  skipped?: boolean;
}

export interface Project {
  id: number;
  pipelines: Pipeline[];
  approvalsRequired: number;
  allowMergeOnSkippedPipeline: boolean;
  path: string;
  repo: BareRepo;
  defaultBranch: string;
  mergeMethod: MergeMethod;
  onlyAllowMergeIfPipelineSucceeds: boolean;
  mrs: Map<number, MergeRequest>;
  statuses: CommitStatus[];
  notes: Map<number, Note[]>;
  members: Map<number, number>;
  nextIid: number;
}

export interface Delivery {
  event: string;
  uuid: string;
  payload: Record<string, unknown>;
  status: number | null;
  body: string;
}

export interface Request {
  method: string;
  path: string;
  status: number;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function pipelineStatus(latest: CommitStatus[]): string {
  const states = latest.map((s) => (s.status === 'failed' && s.allowFailure ? 'success' : s.status));
  if (states.includes('failed')) return 'failed';
  if (states.includes('canceled')) return 'canceled';
  if (states.includes('running')) return 'running';
  if (states.includes('pending') || states.includes('created')) return 'pending';
  return states.length === 0 ? 'created' : 'success';
}

export function statusJson(s: CommitStatus) {
  return {
    id: s.id,
    sha: s.sha,
    ref: s.ref,
    status: s.status,
    name: s.name,
    target_url: s.targetUrl,
    description: s.description,
    allow_failure: s.allowFailure,
    pipeline_id: s.pipelineId,
    created_at: s.createdAt,
  };
}

export function noteJson(n: Note) {
  return {
    id: n.id,
    body: n.body,
    author: { id: n.author.id, username: n.author.username },
    system: n.system,
    created_at: n.createdAt,
    noteable_type: 'MergeRequest',
  };
}

/** One page of a list with GitLab's offset-pagination headers. */
export function page(rows: unknown[], query: Record<string, unknown>) {
  const perPage = Math.min(100, Math.max(1, Number(query['per_page'] ?? 20) || 20));
  const current = Math.max(1, Number(query['page'] ?? 1) || 1);
  const totalPages = Math.max(1, Math.ceil(rows.length / perPage));
  const slice = rows.slice((current - 1) * perPage, current * perPage);
  return {
    status: 200,
    json: slice,
    headers: {
      'x-page': String(current),
      'x-per-page': String(perPage),
      'x-total': String(rows.length),
      'x-total-pages': String(totalPages),
      'x-next-page': current < totalPages ? String(current + 1) : '',
      'x-prev-page': current > 1 ? String(current - 1) : '',
    },
  };
}
