/**
 * GitLab's REST API v4 subset over the simulator's state: users, projects, branches, files, statuses,
 * pipelines, members, merge requests with their approvals, merge and notes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  HttpError,
  type JobStatus,
  type MergeRequest,
  noteJson,
  type Pipeline,
  type Project,
  page,
  type Request,
  STATUSES,
  statusJson,
} from './model.ts';
import type { SimState } from './state.ts';

/** A failure the next REST call matching "METHOD path" answers (once). */
export interface Fault {
  match: RegExp;
  status: number;
  message: string;
}

export interface RestContext {
  /** The token REST calls must send (PRIVATE-TOKEN or Authorization: Bearer). */
  readonly token: string;
  /** Where each answer is recorded. */
  readonly requests: Request[];
  readonly faults: Fault[];
  /** Runs one call at a time with the driver steps. */
  locked<T>(fn: () => Promise<T>): Promise<T>;
}

/** Answers one REST call: the token, injected faults, the JSON body and query, then the route. */
export async function answerRest(
  s: SimState,
  ctx: RestContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  raw: string,
): Promise<void> {
  const method = req.method ?? 'GET';
  const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    ctx.requests.push({ method, path: url.pathname, status });
    res.writeHead(status, {
      'content-type': typeof body === 'string' ? 'text/plain' : 'application/json',
      ...headers,
    });
    res.end(typeof body === 'string' ? body : body === null ? '' : JSON.stringify(body));
  };
  const token = req.headers['private-token'] ?? req.headers.authorization?.replace(/^Bearer /, '');
  if (token !== ctx.token) return send(401, { message: '401 Unauthorized' });
  const fault = ctx.faults.findIndex((f) => f.match.test(`${method} ${url.pathname}`));
  if (fault >= 0) {
    const [f] = ctx.faults.splice(fault, 1);
    return send(f?.status ?? 500, { message: f?.message ?? 'fault' });
  }
  let body: Record<string, unknown> = {};
  if (raw !== '') {
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return send(400, { error: 'body is not JSON' });
    }
  }
  for (const [k, v] of url.searchParams) if (!(k in body)) body[k] = v;
  try {
    const out = await ctx.locked(() => route(s, method, url, body));
    if (out.raw !== undefined) return send(out.status, out.raw);
    return send(out.status, out.json ?? null, out.headers);
  } catch (error) {
    if (error instanceof HttpError) {
      return send(error.status, error.status === 400 ? { error: error.message } : { message: error.message });
    }
    throw error;
  }
}

/** The answer to one authenticated call, by path and method; HttpError for GitLab's refusals. */
export async function route(
  s: SimState,
  method: string,
  url: URL,
  body: Record<string, unknown>,
): Promise<{ status: number; json?: unknown; raw?: string; headers?: Record<string, string> }> {
  const segments = url.pathname.split('/').slice(1);
  if (segments[0] !== 'api' || segments[1] !== 'v4') throw new HttpError(404, '404 Not Found');
  const rest = segments.slice(2);
  if (method === 'GET' && rest[0] === 'users' && rest.length === 1) {
    const name = String(body['username'] ?? '');
    const user = s.users.get(name.toLowerCase());
    return {
      status: 200,
      json:
        user === undefined
          ? []
          : [{ id: user.id, username: user.username, name: user.name, state: 'active' }],
    };
  }
  if (rest[0] !== 'projects' || rest[1] === undefined) throw new HttpError(404, '404 Not Found');
  const p = s.findProject(decodeURIComponent(rest[1]));
  const tail = rest.slice(2);
  const [a, b, c, d, e] = tail;
  if (tail.length === 0 && method === 'GET') {
    return {
      status: 200,
      json: {
        id: p.id,
        path_with_namespace: p.path,
        default_branch: p.defaultBranch,
        merge_method: p.mergeMethod,
        only_allow_merge_if_pipeline_succeeds: p.onlyAllowMergeIfPipelineSucceeds,
        allow_merge_on_skipped_pipeline: p.allowMergeOnSkippedPipeline,
        http_url_to_repo: `${s.url}/${p.path}.git`,
        namespace: { full_path: p.path.split('/').slice(0, -1).join('/') },
      },
    };
  }
  if (a === 'repository' && b === 'branches' && c !== undefined && tail.length === 3) {
    const branch = decodeURIComponent(c);
    const sha = await p.repo.branch(branch);
    if (sha === null) throw new HttpError(404, '404 Branch Not Found');
    if (method === 'GET')
      return {
        status: 200,
        json: { name: branch, commit: { id: sha }, protected: branch === p.defaultBranch },
      };
    if (method === 'DELETE') {
      if (branch === p.defaultBranch) throw new HttpError(400, 'Cannot remove the default branch');
      await p.repo.deleteRef(`refs/heads/${branch}`);
      await s.pushed(p, branch, sha, null, 'mainline-bot');
      return { status: 204 };
    }
  }
  if (a === 'repository' && b === 'files' && c !== undefined && d === 'raw' && method === 'GET') {
    const ref = String(body['ref'] ?? p.defaultBranch);
    const content = await p.repo.showFile(ref, decodeURIComponent(c));
    if (content === null) throw new HttpError(404, '404 File Not Found');
    return { status: 200, raw: content };
  }
  if (a === 'repository' && b === 'commits' && c !== undefined && d === 'statuses' && method === 'GET') {
    if ((await p.repo.resolve(c)) === null) throw new HttpError(404, '404 Commit Not Found');
    const all = body['all'] === 'true' || body['all'] === true;
    const rows = all ? p.statuses.filter((s) => s.sha === c) : s.latestStatuses(p, c);
    return page(rows.map(statusJson), body);
  }
  if (a === 'statuses' && b !== undefined && tail.length === 2 && method === 'POST') {
    const state = String(body['state'] ?? '');
    if (!STATUSES.includes(state)) throw new HttpError(400, 'state does not have a valid value');
    const name = String(body['name'] ?? body['context'] ?? 'default');
    const row = await s.addStatus(
      p,
      b,
      name,
      state as JobStatus,
      typeof body['ref'] === 'string' ? body['ref'] : null,
      typeof body['target_url'] === 'string' ? body['target_url'] : null,
      typeof body['description'] === 'string' ? body['description'] : null,
      false,
    );
    return { status: 201, json: statusJson(row) };
  }
  if (a === 'pipeline' && tail.length === 1 && method === 'POST') {
    const ref = String(body['ref'] ?? '');
    const sha = await p.repo.branch(ref);
    if (sha === null) throw new HttpError(400, 'Reference not found');
    const pipeline: Pipeline = { id: s.nextId++, sha, ref, source: 'api' };
    p.pipelines.push(pipeline);
    return { status: 201, json: s.pipelineJson(p, pipeline.id, sha, ref, 'api') };
  }
  if (a === 'pipelines' && tail.length === 1 && method === 'GET') {
    const byId = new Map<number, { sha: string; ref: string | null; source: string }>();
    for (const x of p.pipelines)
      if (x.skipped !== true) byId.set(x.id, { sha: x.sha, ref: x.ref, source: x.source });
    for (const s of p.statuses)
      if (!byId.has(s.pipelineId)) byId.set(s.pipelineId, { sha: s.sha, ref: s.ref, source: 'external' });
    const rows = [...byId.entries()]
      .filter(([, x]) => body['sha'] === undefined || body['sha'] === x.sha)
      .filter(([, x]) => body['ref'] === undefined || body['ref'] === x.ref)
      .sort(([x], [y]) => y - x)
      .map(([id, x]) => s.pipelineJson(p, id, x.sha, x.ref, x.source));
    return page(rows, body);
  }
  if (a === 'members' && b === 'all' && c !== undefined && tail.length === 3 && method === 'GET') {
    const id = Number(c);
    const level = p.members.get(id);
    const user = [...s.users.values()].find((u) => u.id === id);
    if (level === undefined || user === undefined) throw new HttpError(404, '404 Not found');
    return {
      status: 200,
      json: { id, username: user.username, name: user.name, state: 'active', access_level: level },
    };
  }
  if (a === 'merge_requests') {
    if (b === undefined && method === 'GET') {
      const rows: Record<string, unknown>[] = [];
      for (const mr of p.mrs.values()) {
        if (body['state'] !== undefined && body['state'] !== 'all' && body['state'] !== mr.state) continue;
        if (body['target_branch'] !== undefined && body['target_branch'] !== mr.targetBranch) continue;
        rows.push(await s.mrJson(p, mr));
      }
      return page(rows.reverse(), body);
    }
    const mr = s.mr(p, Number(b));
    if (c === undefined && method === 'GET') return { status: 200, json: await s.mrJson(p, mr) };
    if (c === 'approvals' && d === undefined && method === 'GET') {
      return {
        status: 200,
        json: {
          approved: mr.approvedBy.size >= mr.approvalsRequired,
          approvals_required: mr.approvalsRequired,
          approvals_left: Math.max(0, mr.approvalsRequired - mr.approvedBy.size),
          approved_by: [...mr.approvedBy].map((id) => ({ user: { id } })),
        },
      };
    }
    if (c === 'merge' && d === undefined && method === 'PUT') return merge(s, p, mr, body);
    if (c === 'cancel_merge_when_pipeline_succeeds' && d === undefined && method === 'POST') {
      return cancelAutoMerge(s, p, mr);
    }
    if (c === 'notes') {
      if (d === undefined && method === 'GET') {
        const list = [...(p.notes.get(mr.iid) ?? [])];
        if (body['sort'] !== 'asc') list.reverse();
        return page(list.map(noteJson), body);
      }
      if (d === undefined && method === 'POST') {
        if (typeof body['body'] !== 'string' || body['body'] === '')
          throw new HttpError(400, 'body is missing');
        const note = await s.addNote(p, mr, s.user('mainline-bot'), body['body']);
        return { status: 201, json: noteJson(note) };
      }
      if (d !== undefined && e === undefined && method === 'PUT') {
        const note = (p.notes.get(mr.iid) ?? []).find((n) => n.id === Number(d));
        if (note === undefined) throw new HttpError(404, '404 Note Not Found');
        if (typeof body['body'] !== 'string') throw new HttpError(400, 'body is missing');
        note.body = body['body'];
        return { status: 200, json: noteJson(note) };
      }
    }
  }
  throw new HttpError(404, '404 Not Found');
}

/**
 * PUT …/merge: GitLab's checks and answers, then the project's merge method. With
 * merge_when_pipeline_succeeds (or auto_merge) and the head pipeline still running, auto-merge is set
 * instead (the merge happens when that pipeline succeeds: SimState.autoMerge).
 */
async function merge(s: SimState, p: Project, mr: MergeRequest, body: Record<string, unknown>) {
  const head = await s.headOf(p, mr);
  if (mr.state !== 'opened' || mr.draft) throw new HttpError(405, '405 Method Not Allowed');
  if (body['sha'] !== undefined && body['sha'] !== head) {
    throw new HttpError(409, 'SHA does not match HEAD of source branch');
  }
  const status = await s.mergeStatus(p, mr);
  if (status === 'conflict' || status === 'need_rebase') throw new HttpError(406, 'Branch cannot be merged');
  const auto = [body['merge_when_pipeline_succeeds'], body['auto_merge']].some(
    (v) => v === true || v === 'true',
  );
  const pipeline = s.headPipeline(p, mr, head)?.status;
  if (auto && (pipeline === 'created' || pipeline === 'pending' || pipeline === 'running')) {
    mr.autoMergeSha = head;
    mr.autoMergeParams = { ...body };
    return { status: 200, json: await s.mrJson(p, mr) };
  }
  if (status !== 'mergeable') throw new HttpError(405, '405 Method Not Allowed');
  await s.mergeNow(p, mr, body);
  return { status: 200, json: await s.mrJson(p, mr) };
}

/** POST …/cancel_merge_when_pipeline_succeeds: 405 when not open, 406 when auto-merge is not set. */
async function cancelAutoMerge(s: SimState, p: Project, mr: MergeRequest) {
  if (mr.state !== 'opened') throw new HttpError(405, '405 Method Not Allowed');
  if (mr.autoMergeSha == null) throw new HttpError(406, "Can't cancel the automatic merge");
  mr.autoMergeSha = null;
  mr.autoMergeParams = {};
  return { status: 201, json: await s.mrJson(p, mr) };
}
