import type { Core, RepoState } from './state.ts';
import type { JsonObject, PullState } from './types.ts';

/** Labels on each PR, in the order they were added (GitHub compares names without regard to case). */
const LABELS = new WeakMap<PullState, string[]>();

export function labelsOf(pr: PullState): string[] {
  let labels = LABELS.get(pr);
  if (labels === undefined) {
    labels = [];
    LABELS.set(pr, labels);
  }
  return labels;
}

/** A label as the REST API and webhooks show it. */
export function labelJson(core: Core, repo: RepoState, name: string): JsonObject {
  let id = 7;
  for (const c of name.toLowerCase()) id = (id * 31 + (c.codePointAt(0) ?? 0)) % 1_000_000_007;
  return {
    id,
    node_id: `LA_${id}`,
    url: core.apiUrl(repo, `/labels/${encodeURIComponent(name)}`),
    name,
    color: 'ededed',
    default: false,
    description: null,
  };
}

export function labelsJson(core: Core, repo: RepoState, pr: PullState): JsonObject[] {
  return labelsOf(pr).map((name) => labelJson(core, repo, name));
}
