import { HttpError, intParam, ok, paginate, type RequestContext, type Route, repoOf, route } from './http.ts';
import { labelJson, labelsJson, labelsOf } from './ops-labels.ts';
import { emitPull, findPull } from './ops-pulls.ts';
import type { Core, RepoState, Tx } from './state.ts';
import type { PullState } from './types.ts';

const R = '/repos/{owner}/{repo}';

/** Adds each label the PR lacks (pull_request labeled for each, sent by actor). */
export async function addLabels(
  core: Core,
  tx: Tx,
  repo: RepoState,
  pr: PullState,
  names: readonly string[],
  actor: string,
): Promise<void> {
  const labels = labelsOf(pr);
  for (const name of names) {
    if (labels.some((l) => l.toLowerCase() === name.toLowerCase())) continue;
    labels.push(name);
    await emitPull(core, tx, repo, pr, 'labeled', actor, { label: labelJson(core, repo, name) });
  }
}

/** Takes the label off the PR (pull_request unlabeled, sent by actor); 404 when it is not on it, as GitHub. */
export async function removeLabel(
  core: Core,
  tx: Tx,
  repo: RepoState,
  pr: PullState,
  name: string,
  actor: string,
): Promise<void> {
  const labels = labelsOf(pr);
  const at = labels.findIndex((l) => l.toLowerCase() === name.toLowerCase());
  if (at < 0) throw new HttpError(404, 'Label does not exist');
  const [removed] = labels.splice(at, 1);
  await emitPull(core, tx, repo, pr, 'unlabeled', actor, { label: labelJson(core, repo, removed ?? name) });
}

async function listLabels(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const page = paginate(ctx, labelsJson(ctx.core, repo, findPull(repo, intParam(ctx, 'number'))));
  return ok(page.items, 200, page.headers);
}

async function postLabels(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const pr = findPull(repo, intParam(ctx, 'number'));
  const names = ctx.body['labels'];
  if (!Array.isArray(names) || names.some((n) => typeof n !== 'string' || n === '' || n.length > 50)) {
    throw new HttpError(422, 'Validation Failed', {
      errors: [{ resource: 'Label', field: 'labels', code: 'invalid' }],
    });
  }
  await addLabels(ctx.core, ctx.tx, repo, pr, names as string[], ctx.actor.login);
  return ok(labelsJson(ctx.core, repo, pr));
}

async function deleteLabel(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const pr = findPull(repo, intParam(ctx, 'number'));
  await removeLabel(ctx.core, ctx.tx, repo, pr, ctx.params['name'] ?? '', ctx.actor.login);
  return ok(labelsJson(ctx.core, repo, pr));
}

/** Issue labels of pull requests: list, add (creating labels the repository lacks, as GitHub), remove one. */
export const labelRoutes: Route[] = [
  route('GET', `${R}/issues/{number}/labels`, listLabels),
  route('POST', `${R}/issues/{number}/labels`, postLabels),
  route('DELETE', `${R}/issues/{number}/labels/{name}`, deleteLabel),
];
