import type { CommitStatusReading, Forge, ForgeRepo } from '../../app/ports.ts';
import { parseMainlineConfig } from '../git/index.ts';
import { unless } from './client.ts';
import type { GitLabForge } from './forge.ts';
import { projectPath } from './project.ts';
import { GITLAB_STATUS_NAME } from './report.ts';

type RequiredStatuses = Awaited<ReturnType<Forge['requiredStatuses']>>;

/**
 * The required status that stands for the project's "Pipelines must succeed" setting: the overall
 * status of the latest pipeline on the commit, as GitLab itself checks before a merge.
 */
export const PIPELINE_STATUS_NAME = 'gitlab/pipeline';

/**
 * `.mainline.yaml` on the branch, and the project's "Pipelines must succeed" setting as the
 * provider's rule (the latest pipeline's overall status, PIPELINE_STATUS_NAME): the file wins when
 * it names statuses, as it does over GitHub's branch protection.
 */
export async function requiredStatuses(
  forge: GitLabForge,
  repo: ForgeRepo,
  branch: string,
): Promise<RequiredStatuses> {
  const settings = await forge.projectSettings(repo);
  const none: RequiredStatuses = {
    serviceConfig: null,
    branchProtection: settings.only_allow_merge_if_pipeline_succeeds === true ? [PIPELINE_STATUS_NAME] : null,
    flakeProtection: null,
  };
  const path = `${projectPath(repo)}/repository/files/${encodeURIComponent('.mainline.yaml')}/raw?ref=${encodeURIComponent(branch)}`;
  const res = await unless([404], null, () =>
    forge.client.request<string>('GET', path, undefined, { raw: true }),
  );
  if (res === null) return none;
  const parsed = parseMainlineConfig(res.data);
  if (!parsed.ok) {
    forge.client.log.warn(
      { repo: `${repo.owner}/${repo.name}`, reason: parsed.reason },
      'unreadable .mainline.yaml',
    );
    return none;
  }
  return {
    serviceConfig: parsed.serviceConfig,
    branchProtection: none.branchProtection,
    flakeProtection: parsed.flakeProtection,
  };
}

/**
 * The latest status of every job and external status on a commit, by name, as commit-status states.
 * Jobs allowed to fail count as passed when they fail.
 */
export async function commitStatuses(
  forge: GitLabForge,
  repo: ForgeRepo,
  sha: string,
): Promise<CommitStatusReading[]> {
  const rows = await forge.client.list<{
    name: string;
    status: string;
    allow_failure?: boolean;
    target_url?: string | null;
  }>(`${projectPath(repo)}/repository/commits/${sha}/statuses`);
  const out = new Map<string, CommitStatusReading>();
  for (const row of rows) {
    if (row.name === GITLAB_STATUS_NAME || out.has(row.name)) continue;
    out.set(row.name, {
      name: row.name,
      state: statusState(row.status, row.allow_failure === true),
      url: row.target_url ?? null,
    });
  }
  const [pipeline] = await forge.client.list<{ status: string; web_url?: string | null }>(
    `${projectPath(repo)}/pipelines?sha=${sha}&order_by=id&sort=desc`,
    1,
  );
  if (pipeline !== undefined) {
    // A skipped pipeline passes only where the project says so, as GitLab's own merge check does.
    const skippedOk =
      pipeline.status !== 'skipped' ||
      (await forge.projectSettings(repo)).allow_merge_on_skipped_pipeline === true;
    out.set(PIPELINE_STATUS_NAME, {
      name: PIPELINE_STATUS_NAME,
      state: skippedOk ? statusState(pipeline.status) : 'failure',
      url: pipeline.web_url ?? null,
    });
  }
  return [...out.values()];
}

/** A GitLab job or commit status as a commit-status state. */
export function statusState(
  status: string,
  allowFailure = false,
): 'pending' | 'success' | 'failure' | 'error' {
  switch (status) {
    case 'success':
    case 'skipped':
      return 'success';
    case 'failed':
      return allowFailure ? 'success' : 'failure';
    case 'canceled':
    case 'canceling':
      return 'error';
    default:
      return 'pending';
  }
}
