import type { ForgeRepo } from '../../app/ports.ts';
import { projectId } from './client.ts';

/** The project settings the forge follows (GET /projects/:id). */
export interface GlProjectSettings {
  merge_method?: 'merge' | 'rebase_merge' | 'ff';
  only_allow_merge_if_pipeline_succeeds?: boolean;
  allow_merge_on_skipped_pipeline?: boolean | null;
}

/** The API path of a repository's project, which every call of the forge starts from. */
export function projectPath(repo: ForgeRepo): string {
  return `/projects/${projectId(repo.owner, repo.name)}`;
}

/** The history a project's merge method allows, for reasons ("fast-forward merges", ...). */
export function allows(settings: GlProjectSettings): string {
  return settings.merge_method === 'ff' ? 'fast-forward merges' : 'semi-linear history';
}
