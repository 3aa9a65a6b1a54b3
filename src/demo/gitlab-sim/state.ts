/**
 * The simulator's state and the changes behind both REST calls and driver steps: merge request heads,
 * pushes, commit statuses, notes, and the JSON and webhook payloads GitLab answers for them.
 */
import { ZERO_SHA } from './git.ts';
import {
  type CommitStatus,
  HttpError,
  type JobStatus,
  type MergeRequest,
  type Note,
  type Project,
  pipelineStatus,
  type User,
} from './model.ts';
import type { Webhooks } from './webhooks.ts';

export class SimState {
  readonly url: string;
  readonly hooks: Webhooks;
  readonly projects = new Map<number, Project>();
  readonly users = new Map<string, User>();
  nextId = 1000;

  constructor(url: string, hooks: Webhooks) {
    this.url = url;
    this.hooks = hooks;
  }

  user(username: string): User {
    let user = this.users.get(username.toLowerCase());
    if (user === undefined) {
      user = { id: this.nextId++, username, name: username };
      this.users.set(username.toLowerCase(), user);
    }
    return user;
  }

  mr(p: Project, iid: number): MergeRequest {
    const mr = p.mrs.get(iid);
    if (mr === undefined) throw new HttpError(404, '404 Not found');
    return mr;
  }

  /** The project holding a merge request's source branch: its fork's, when that fork is a project here. */
  sourceOf(p: Project, mr: MergeRequest): Project {
    return (mr.sourceProjectId == null ? undefined : this.projects.get(mr.sourceProjectId)) ?? p;
  }

  async headOf(p: Project, mr: MergeRequest): Promise<string> {
    if (mr.frozenSha !== null) return mr.frozenSha;
    return (await this.sourceOf(p, mr).repo.branch(mr.sourceBranch)) ?? ZERO_SHA;
  }

  /** Keeps refs/merge-requests/<iid>/head at the head, its commits fetched from a fork as GitLab does. */
  async syncMrRef(p: Project, mr: MergeRequest): Promise<void> {
    const head = await this.headOf(p, mr);
    if (head === ZERO_SHA) return;
    const source = this.sourceOf(p, mr);
    if (source !== p && mr.frozenSha === null) {
      const ref = `refs/merge-requests/${mr.iid}/head`;
      await p.repo.run(['fetch', '--quiet', source.repo.gitDir, `+refs/heads/${mr.sourceBranch}:${ref}`]);
      return;
    }
    await p.repo.setRef(`refs/merge-requests/${mr.iid}/head`, head);
  }

  /** A branch moved: push hook, and the open merge requests from it get their new head. */
  async pushed(p: Project, branch: string, before: string | null, after: string | null, username: string) {
    const user = this.user(username);
    this.hook(p, 'push', {
      object_kind: 'push',
      event_name: 'push',
      before: before ?? ZERO_SHA,
      after: after ?? ZERO_SHA,
      ref: `refs/heads/${branch}`,
      checkout_sha: after,
      user_id: user.id,
      user_username: user.username,
      project_id: p.id,
      project: this.projectHook(p),
      commits: [],
      total_commits_count: after === null ? 0 : 1,
    });
    for (const mr of p.mrs.values()) {
      if (mr.state !== 'opened' || mr.sourceBranch !== branch) continue;
      // GitLab aborts auto-merge when the source branch gets another head.
      if (mr.autoMergeSha != null && mr.autoMergeSha !== after) mr.autoMergeSha = null;
      if (after === null) {
        mr.frozenSha = before;
        mr.state = 'closed';
        this.hook(p, 'merge_request', await this.mrHook(p, mr, 'close', user));
        continue;
      }
      await this.syncMrRef(p, mr);
      this.hook(p, 'merge_request', await this.mrHook(p, mr, 'update', user, before ?? undefined));
    }
  }

  async addStatus(
    p: Project,
    sha: string,
    name: string,
    status: JobStatus,
    ref: string | null,
    targetUrl: string | null,
    description: string | null,
    allowFailure: boolean,
  ): Promise<CommitStatus> {
    if ((await p.repo.resolve(sha)) !== sha) throw new HttpError(404, '404 References Not Found');
    // A job joins the commit's pipeline: one created through the API, else the first one it had.
    const created = p.pipelines.findLast((x) => x.sha === sha && x.skipped !== true);
    const pipelineId = created?.id ?? p.statuses.find((s) => s.sha === sha)?.pipelineId;
    const row: CommitStatus = {
      id: this.nextId++,
      sha,
      ref,
      name,
      status,
      targetUrl,
      description,
      allowFailure,
      pipelineId: pipelineId ?? this.nextId++,
      createdAt: new Date().toISOString(),
    };
    p.statuses.push(row);
    const latest = this.latestStatuses(p, sha);
    this.hook(p, 'build', {
      object_kind: 'build',
      ref: ref ?? '',
      sha,
      build_id: row.id,
      build_name: name,
      build_status: status,
      build_allow_failure: allowFailure,
      pipeline_id: row.pipelineId,
      project_id: p.id,
      project: this.projectHook(p),
    });
    this.hook(p, 'pipeline', {
      object_kind: 'pipeline',
      object_attributes: {
        id: row.pipelineId,
        sha,
        ref: ref ?? '',
        status: pipelineStatus(latest),
        source: 'external',
      },
      project: this.projectHook(p),
      builds: latest.map((s) => ({
        id: s.id,
        name: s.name,
        status: s.status,
        allow_failure: s.allowFailure,
      })),
    });
    await this.autoMerge(p, sha);
    return row;
  }

  /**
   * Auto-merge of the merge requests set to merge at sha when their head pipeline succeeds: merged
   * when it succeeded, auto-merge cancelled (with a merge request event) when it failed or was
   * cancelled, or when the merge itself is refused.
   */
  async autoMerge(p: Project, sha: string): Promise<void> {
    for (const mr of p.mrs.values()) {
      if (mr.state !== 'opened' || mr.autoMergeSha !== sha || (await this.headOf(p, mr)) !== sha) continue;
      const status = this.headPipeline(p, mr, sha)?.status;
      if (status !== 'success' && status !== 'failed' && status !== 'canceled') continue;
      const params = mr.autoMergeParams ?? {};
      mr.autoMergeSha = null;
      mr.autoMergeParams = {};
      if (status === 'success') {
        try {
          await this.mergeNow(p, mr, params);
          continue;
        } catch (error) {
          if (!(error instanceof HttpError)) throw error;
        }
      }
      this.hook(p, 'merge_request', await this.mrHook(p, mr, 'update', this.user('mainline-bot')));
    }
  }

  /**
   * The merge request's head pipeline: the latest pipeline (pushed or created through the API) of its
   * head on its source branch, with its status from its jobs; null when there is none.
   */
  headPipeline(p: Project, mr: MergeRequest, head: string) {
    const pipeline = p.pipelines.findLast((x) => x.sha === head && x.ref === mr.sourceBranch);
    if (pipeline === undefined) return null;
    const json = this.pipelineJson(p, pipeline.id, head, pipeline.ref, pipeline.source);
    return pipeline.skipped === true ? { ...json, status: 'skipped' } : json;
  }

  /** Merges now with the project's merge method (the merge call's parameters); HttpError when it cannot. */
  async mergeNow(p: Project, mr: MergeRequest, body: Record<string, unknown>): Promise<void> {
    const head = await this.headOf(p, mr);
    const target = await p.repo.branch(mr.targetBranch);
    if (target === null) throw new HttpError(406, 'Branch cannot be merged');
    const squash = body['squash'] === true || body['squash'] === 'true';
    const title = mr.title;
    let squashSha: string | null = null;
    let source = head;
    if (squash) {
      const base = (await p.repo.mergeBase(target, head)) ?? target;
      const message =
        typeof body['squash_commit_message'] === 'string' ? body['squash_commit_message'] : title;
      squashSha = await p.repo.commitTree(await p.repo.tree(head), [base], message);
      source = squashSha;
    }
    let newTarget: string;
    let mergeSha: string | null = null;
    if (p.mergeMethod === 'ff') {
      newTarget = source;
    } else {
      const tree = await p.repo.mergeTree(target, source);
      if (tree === null) throw new HttpError(406, 'Branch cannot be merged');
      const message =
        typeof body['merge_commit_message'] === 'string'
          ? body['merge_commit_message']
          : `Merge branch '${mr.sourceBranch}' into '${mr.targetBranch}'\n\n${title}\n\nSee merge request ${p.path}!${mr.iid}`;
      mergeSha = await p.repo.commitTree(tree, [target, source], message);
      newTarget = mergeSha;
    }
    if (!(await p.repo.cas(`refs/heads/${mr.targetBranch}`, newTarget, target))) {
      throw new HttpError(422, 'Merge failed: the target branch moved');
    }
    mr.state = 'merged';
    mr.frozenSha = head;
    mr.mergeCommitSha = mergeSha;
    mr.squashCommitSha = squashSha;
    mr.autoMergeSha = null;
    const bot = this.user('mainline-bot');
    await this.pushed(p, mr.targetBranch, target, newTarget, bot.username);
    this.hook(p, 'merge_request', await this.mrHook(p, mr, 'merge', bot));
  }

  /** The latest status of each name on a commit, newest first. */
  latestStatuses(p: Project, sha: string): CommitStatus[] {
    const out = new Map<string, CommitStatus>();
    for (const s of [...p.statuses].reverse()) if (s.sha === sha && !out.has(s.name)) out.set(s.name, s);
    return [...out.values()];
  }

  async addNote(p: Project, mr: MergeRequest, author: User, body: string): Promise<Note> {
    const note: Note = {
      id: this.nextId++,
      body,
      author,
      system: false,
      createdAt: new Date().toISOString(),
    };
    const list = p.notes.get(mr.iid) ?? [];
    list.push(note);
    p.notes.set(mr.iid, list);
    this.hook(p, 'note', {
      object_kind: 'note',
      event_type: 'note',
      user: { id: author.id, username: author.username, name: author.name },
      project_id: p.id,
      project: this.projectHook(p),
      object_attributes: { id: note.id, note: body, noteable_type: 'MergeRequest', author_id: author.id },
      merge_request: {
        iid: mr.iid,
        id: mr.id,
        target_branch: mr.targetBranch,
        source_branch: mr.sourceBranch,
      },
    });
    return note;
  }

  async mergeStatus(p: Project, mr: MergeRequest): Promise<string> {
    if (mr.state !== 'opened') return 'not_open';
    if (mr.draft) return 'draft_status';
    const head = await this.headOf(p, mr);
    const target = await p.repo.branch(mr.targetBranch);
    if (target === null || head === ZERO_SHA) return 'broken_status';
    if ((await p.repo.mergeTree(target, head)) === null) return 'conflict';
    if (mr.approvedBy.size < mr.approvalsRequired) return 'not_approved';
    if (p.mergeMethod !== 'merge' && !(await p.repo.isAncestor(target, head))) return 'need_rebase';
    const pipeline = this.headPipeline(p, mr, head);
    if (p.onlyAllowMergeIfPipelineSucceeds && pipeline !== null) {
      if (pipeline.status === 'success') return 'mergeable';
      if (pipeline.status === 'skipped') return p.allowMergeOnSkippedPipeline ? 'mergeable' : 'ci_must_pass';
      return ['failed', 'canceled'].includes(pipeline.status) ? 'ci_must_pass' : 'ci_still_running';
    }
    if (p.onlyAllowMergeIfPipelineSucceeds) {
      const latest = this.latestStatuses(p, head);
      if (latest.length === 0 || pipelineStatus(latest) !== 'success') {
        return latest.some((s) => s.status === 'running' || s.status === 'pending')
          ? 'ci_still_running'
          : 'ci_must_pass';
      }
    }
    return 'mergeable';
  }

  async mrJson(p: Project, mr: MergeRequest): Promise<Record<string, unknown>> {
    const sha = await this.headOf(p, mr);
    const target = await p.repo.branch(mr.targetBranch);
    const base = target === null || sha === ZERO_SHA ? null : await p.repo.mergeBase(target, sha);
    const detailed = await this.mergeStatus(p, mr);
    return {
      id: mr.id,
      iid: mr.iid,
      project_id: p.id,
      title: mr.draft ? `Draft: ${mr.title}` : mr.title,
      state: mr.state,
      source_branch: mr.sourceBranch,
      target_branch: mr.targetBranch,
      source_project_id: mr.sourceProjectId ?? p.id,
      target_project_id: p.id,
      sha,
      draft: mr.draft,
      work_in_progress: mr.draft,
      detailed_merge_status: detailed,
      merge_status: detailed === 'conflict' ? 'cannot_be_merged' : 'can_be_merged',
      has_conflicts: detailed === 'conflict',
      author: { id: mr.author.id, username: mr.author.username, name: mr.author.name },
      diff_refs: { base_sha: base, head_sha: sha, start_sha: target },
      merge_commit_sha: mr.mergeCommitSha,
      squash_commit_sha: mr.squashCommitSha,
      merge_when_pipeline_succeeds: mr.autoMergeSha != null,
      head_pipeline: sha === ZERO_SHA ? null : this.headPipeline(p, mr, sha),
      allow_collaboration: mr.allowCollaboration ?? false,
      web_url: `${this.url}/${p.path}/-/merge_requests/${mr.iid}`,
    };
  }

  async mrHook(p: Project, mr: MergeRequest, action: string, user: User, oldrev?: string) {
    const json = await this.mrJson(p, mr);
    return {
      object_kind: 'merge_request',
      event_type: 'merge_request',
      user: { id: user.id, username: user.username, name: user.name },
      project: this.projectHook(p),
      object_attributes: {
        id: mr.id,
        iid: mr.iid,
        title: json['title'],
        state: mr.state,
        action,
        source_branch: mr.sourceBranch,
        target_branch: mr.targetBranch,
        detailed_merge_status: json['detailed_merge_status'],
        last_commit: { id: json['sha'] },
        ...(oldrev === undefined ? {} : { oldrev }),
        draft: mr.draft,
      },
    };
  }

  projectHook(p: Project) {
    return {
      id: p.id,
      name: p.path.split('/').at(-1),
      path_with_namespace: p.path,
      default_branch: p.defaultBranch,
      web_url: `${this.url}/${p.path}`,
      git_http_url: `${this.url}/${p.path}.git`,
    };
  }

  hook(p: Project, kind: string, payload: Record<string, unknown>): void {
    void p;
    this.hooks.send(kind, payload);
  }

  pipelineJson(p: Project, id: number, sha: string, ref: string | null, source: string) {
    const jobs = this.latestStatuses(p, sha).filter((s) => s.pipelineId === id);
    return {
      id,
      sha,
      ref,
      source,
      status: pipelineStatus(jobs),
      web_url: `${this.url}/${p.path}/-/pipelines/${id}`,
    };
  }

  findProject(id: string): Project {
    const byId = /^\d+$/.test(id) ? this.projects.get(Number(id)) : undefined;
    if (byId !== undefined) return byId;
    for (const p of this.projects.values()) if (p.path.toLowerCase() === id.toLowerCase()) return p;
    throw new HttpError(404, '404 Project Not Found');
  }
}
