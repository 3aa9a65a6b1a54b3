import { isSha } from './git.ts';
import {
  HttpError,
  noContent,
  ok,
  optionalBoolean,
  optionalString,
  type RequestContext,
  type Route,
  repoOf,
  requireString,
  route,
} from './http.ts';
import { branchOfRef, commitJson, mergeIntoBranch, moveBranch, refJson, resolveOr404 } from './ops-git.ts';
import type { RepoState } from './state.ts';

const R = '/repos/{owner}/{repo}';

/** `heads/x` → x; other namespaces (tags, ...) are not simulated: 404. */
function branchParam(ctx: RequestContext): string {
  const ref = ctx.params['ref'] ?? '';
  if (!ref.startsWith('heads/')) throw new HttpError(404, 'Not Found');
  return ref.slice('heads/'.length);
}

async function getRef(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const branch = branchParam(ctx);
  const sha = await repo.git.branch(branch);
  if (sha === null) throw new HttpError(404, 'Not Found');
  return ok(refJson(ctx.core, repo, branch, sha));
}

async function matchingRefs(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const prefix = branchParam(ctx);
  const refs = [...(await repo.git.branches())]
    .filter(([name]) => name.startsWith(prefix))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, sha]) => refJson(ctx.core, repo, name, sha));
  return ok(refs);
}

async function existingCommit(repo: RepoState, sha: string): Promise<string> {
  const found = isSha(sha) ? await repo.git.resolve(sha) : null;
  if (found === null) throw new HttpError(422, 'Object does not exist');
  return found;
}

async function createRef(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const branch = branchOfRef(requireString(ctx.body, 'ref'));
  const sha = await existingCommit(repo, requireString(ctx.body, 'sha'));
  if ((await repo.git.branch(branch)) !== null) throw new HttpError(422, 'Reference already exists');
  const moved = await moveBranch(ctx.core, ctx.tx, repo, branch, sha, null, { pusher: ctx.actor.login });
  if (!moved) throw new HttpError(422, 'Reference already exists');
  return ok(refJson(ctx.core, repo, branch, sha), 201);
}

async function updateRef(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const branch = branchParam(ctx);
  const current = await repo.git.branch(branch);
  if (current === null) throw new HttpError(422, 'Reference does not exist');
  const sha = await existingCommit(repo, requireString(ctx.body, 'sha'));
  const force = optionalBoolean(ctx.body, 'force') ?? false;
  if (!force && !(await repo.git.isAncestor(current, sha))) {
    throw new HttpError(422, 'Update is not a fast forward');
  }
  if (sha !== current) {
    const moved = await moveBranch(ctx.core, ctx.tx, repo, branch, sha, current, { pusher: ctx.actor.login });
    if (!moved) throw new HttpError(422, 'Reference cannot be updated');
  }
  return ok(refJson(ctx.core, repo, branch, sha));
}

async function deleteRef(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const branch = branchParam(ctx);
  const current = await repo.git.branch(branch);
  if (current === null) throw new HttpError(422, 'Reference does not exist');
  if (repo.protection.has(branch)) throw new HttpError(422, 'Cannot delete this protected branch');
  await moveBranch(ctx.core, ctx.tx, repo, branch, null, current, { pusher: ctx.actor.login });
  return noContent();
}

async function merge(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const base = requireString(ctx.body, 'base');
  const head = requireString(ctx.body, 'head');
  const message = optionalString(ctx.body, 'commit_message');
  const sha = await mergeIntoBranch(ctx.core, ctx.tx, repo, base, head, message, ctx.actor.login);
  if (sha === null) return noContent();
  return ok(commitJson(ctx.core, repo, await repo.git.commitInfo(sha)), 201);
}

async function compare(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const basehead = ctx.params['basehead'] ?? '';
  const dots = basehead.indexOf('...');
  if (dots < 0) throw new HttpError(404, 'Not Found');
  const base = await resolveOr404(repo, basehead.slice(0, dots));
  const head = await resolveOr404(repo, basehead.slice(dots + 3));
  const mergeBase = await repo.git.mergeBase(base, head);
  if (mergeBase === null) throw new HttpError(404, 'No common ancestor between base and head.');
  const ahead = await repo.git.commitsBetween(base, head);
  const behind = await repo.git.commitsBetween(head, base);
  const status =
    ahead.length === 0 && behind.length === 0
      ? 'identical'
      : behind.length === 0
        ? 'ahead'
        : ahead.length === 0
          ? 'behind'
          : 'diverged';
  const commits = [];
  for (const [sha] of ahead.slice(0, 250)) {
    if (sha) commits.push(commitJson(ctx.core, repo, await repo.git.commitInfo(sha)));
  }
  return ok({
    url: ctx.core.apiUrl(repo, `/compare/${basehead}`),
    status,
    ahead_by: ahead.length,
    behind_by: behind.length,
    total_commits: ahead.length,
    base_commit: commitJson(ctx.core, repo, await repo.git.commitInfo(base)),
    merge_base_commit: commitJson(ctx.core, repo, await repo.git.commitInfo(mergeBase)),
    commits,
    files: [],
  });
}

async function contents(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const file = (ctx.params['path'] ?? '').replace(/^\/+|\/+$/g, '');
  const ref = ctx.query.get('ref') ?? repo.defaultBranch;
  const commit = await resolveOr404(repo, ref, `No commit found for the ref ${ref}`);
  const entry = file === '' ? null : await repo.git.entry(commit, file);
  if (entry === null) throw new HttpError(404, 'Not Found');
  const name = file.split('/').at(-1) ?? file;
  const common = (type: string, entryPath: string, sha: string) => ({
    type,
    name: entryPath.split('/').at(-1) ?? entryPath,
    path: entryPath,
    sha,
    url: ctx.core.apiUrl(repo, `/contents/${entryPath}?ref=${encodeURIComponent(ref)}`),
    html_url: ctx.core.htmlUrl(repo, `/blob/${ref}/${entryPath}`),
  });
  if (entry.type === 'tree') {
    const items = entry.content
      .toString('utf8')
      .split('\0')
      .filter((line) => line !== '')
      .map((line) => {
        const [meta = '', entryName = ''] = line.split('\t');
        const [, type = '', sha = ''] = meta.split(' ');
        return common(type === 'tree' ? 'dir' : 'file', `${file}/${entryName}`, sha);
      });
    return ok(items);
  }
  const base64 = entry.content.toString('base64').replace(/(.{60})/g, '$1\n');
  return ok({
    ...common('file', file, entry.sha),
    name,
    size: entry.content.length,
    encoding: 'base64',
    content: base64.endsWith('\n') || base64 === '' ? base64 : `${base64}\n`,
    download_url: null,
  });
}

async function getCommit(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const ref = ctx.params['ref'] ?? '';
  const sha = await resolveOr404(repo, ref, `No commit found for SHA: ${ref}`);
  return ok(commitJson(ctx.core, repo, await repo.git.commitInfo(sha)));
}

async function getBranch(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const branch = ctx.params['branch'] ?? '';
  const sha = await repo.git.branch(branch);
  if (sha === null) throw new HttpError(404, 'Branch not found');
  return ok({
    name: branch,
    commit: commitJson(ctx.core, repo, await repo.git.commitInfo(sha)),
    protected: repo.protection.has(branch),
  });
}

export const gitRoutes: Route[] = [
  route('GET', R, async (ctx) => ok(ctx.core.repoJson(repoOf(ctx)))),
  route('GET', `${R}/git/ref/{ref+}`, getRef),
  route('GET', `${R}/git/refs/{ref+}`, getRef),
  route('GET', `${R}/git/matching-refs/{ref+}`, matchingRefs),
  route('POST', `${R}/git/refs`, createRef),
  route('PATCH', `${R}/git/refs/{ref+}`, updateRef),
  route('DELETE', `${R}/git/refs/{ref+}`, deleteRef),
  route('POST', `${R}/merges`, merge),
  route('GET', `${R}/compare/{basehead+}`, compare),
  route('GET', `${R}/contents/{path+}`, contents),
  route('GET', `${R}/commits/{ref+}`, getCommit),
  route('GET', `${R}/branches/{branch+}`, getBranch),
];
