import type { ForgeRepo, PrStateReport } from '../../app/ports.ts';
import type { PrState } from '../../domain/queue/index.ts';
import { stateTexts } from '../../domain/queue/state-text.ts';
import { statusOf } from './client.ts';
import type { GitLabForge } from './forge.ts';
import { projectPath } from './project.ts';

/** The commit status name Mainline sets on a queued merge request's head. */
export const GITLAB_STATUS_NAME = 'mainline/merge-queue';

/** Hidden first line of Mainline's one note per merge request, by which it is found and edited. */
export const NOTE_MARKER = '<!-- mainline:queue-status -->';

const STATUS_STATES: Record<PrState, 'pending' | 'running' | 'success' | 'failed' | 'canceled'> = {
  not_ready: 'pending',
  pending: 'pending',
  testing: 'running',
  tests_passed: 'running',
  pending_failure: 'running',
  merged: 'success',
  failed: 'failed',
  cancelled: 'canceled',
};

const LABELS = stateTexts('merge requests');

/**
 * A commit status on the head (statusCheck) and one upserted note (comments). Telling the author
 * never holds up the queue: a merge request or commit GitLab refuses (400, 403, 404) is skipped.
 */
export async function reportPrState(
  forge: GitLabForge,
  repo: ForgeRepo,
  input: PrStateReport,
): Promise<void> {
  const skip = (what: string) => (error: unknown) => {
    const status = statusOf(error);
    if (status !== 400 && status !== 403 && status !== 404) throw error;
    forge.client.log.warn(
      { repo: `${repo.owner}/${repo.name}`, mr: input.prNumber },
      `${what} skipped: ${(error as Error).message}`,
    );
  };
  // With "Pipelines must succeed" an external status that is not a success holds up the head's
  // pipeline, so GitLab would refuse the queue's own merge: the note says it all instead.
  const pipelineGate = (await forge.projectSettings(repo)).only_allow_merge_if_pipeline_succeeds === true;
  if ((input.statusCheck ?? true) && !pipelineGate) {
    await forge.client
      .request('POST', `${projectPath(repo)}/statuses/${input.headSha}`, {
        state: STATUS_STATES[input.state],
        name: GITLAB_STATUS_NAME,
        description: `${LABELS[input.state]}: ${input.reason}`.slice(0, 140),
        ...(input.targetUrl === undefined ? {} : { target_url: input.targetUrl }),
      })
      .catch(skip('status'));
  }
  if (input.comments ?? true) {
    let reason = input.reason;
    if (input.state === 'not_ready') {
      const left = await forge.approvalsLeft(repo, input.prNumber).catch(() => 0);
      if (left > 0)
        reason += ` (GitLab: ${left} more approval${left === 1 ? '' : 's'} required before it can be queued)`;
    }
    const body = [
      NOTE_MARKER,
      `**Merge queue: ${LABELS[input.state]}**`,
      '',
      reason,
      ...(input.details === undefined ? [] : ['', input.details]),
    ].join('\n');
    const notes = `${projectPath(repo)}/merge_requests/${input.prNumber}/notes`;
    try {
      const all = await forge.client.list<{ id: number; body: string }>(
        `${notes}?sort=asc&order_by=created_at`,
      );
      const mine = all.find((n) => n.body.startsWith(NOTE_MARKER));
      if (mine === undefined) await forge.client.request('POST', notes, { body });
      else if (mine.body !== body) await forge.client.request('PUT', `${notes}/${mine.id}`, { body });
    } catch (error) {
      skip('note')(error);
    }
  }
}
