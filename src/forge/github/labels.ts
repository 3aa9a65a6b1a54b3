import { stateLabelChanges } from '../../domain/github-labels.ts';
import type { PrState } from '../../domain/queue/index.ts';
import { unless } from './api.ts';
import type { GitHubApi } from './client.ts';

type Params = { owner: string; repo: string };

/** The names of the labels on issue/PR `number`. */
async function labelsOn(api: GitHubApi, p: Params, number: number): Promise<string[]> {
  const labels = (await api.paginate('GET /repos/{owner}/{repo}/issues/{issue_number}/labels', {
    ...p,
    issue_number: number,
    per_page: 100,
  })) as { name?: string }[];
  return labels.map((l) => l.name ?? '').filter((n) => n !== '');
}

/** Takes `label` off PR `number`; a label that is not there (404) is no error, so repeating is harmless. */
export async function removeLabel(api: GitHubApi, p: Params, number: number, label: string): Promise<void> {
  await unless([404], null, () =>
    api.request('DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}', {
      ...p,
      issue_number: number,
      name: label,
    }),
  );
}

/**
 * Makes PR `number` carry the one state label of `state` (docs/github.md, Labels): reads its labels,
 * takes off the queue's other state labels, adds the one that applies (GitHub creates a missing label
 * in the repository). Only `mainline:` state labels are touched; repeating it changes nothing.
 */
export async function syncStateLabel(
  api: GitHubApi,
  p: Params,
  number: number,
  state: PrState,
): Promise<void> {
  const { add, remove } = stateLabelChanges(await labelsOn(api, p, number), state);
  for (const label of remove) await removeLabel(api, p, number, label);
  if (add.length > 0) {
    await api.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
      ...p,
      issue_number: number,
      labels: add,
    });
  }
}
