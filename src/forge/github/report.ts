import type { PrStateReport } from '../../app/ports.ts';
import type { PrState } from '../../domain/queue/index.ts';
import { stateTexts } from '../../domain/queue/state-text.ts';
import { type GhComment, isTransient, messageOf, statusOf } from './api.ts';
import type { GitHubApi, GitHubClient } from './client.ts';
import { syncStateLabel } from './labels.ts';

/** The commit status context Mainline sets on a queued PR's head. */
export const STATUS_CONTEXT = 'mainline/merge-queue';
/** Hidden first line of Mainline's one comment per PR, by which it is found and edited. */
export const COMMENT_MARKER = '<!-- mainline:queue-status -->';
const MAX_DESCRIPTION = 140;

/** Which ways of telling the author are on (the queue's commentsEnabled / statusCheckEnabled). */
export interface TalkBack {
  comments: boolean;
  statusCheck: boolean;
}

/** What to report: the port's PrStateReport (comments/statusCheck default to the forge's talkBack). */
export type ReportInput = PrStateReport;

const LABELS = stateTexts('PRs');

const STATUS_STATES: Record<PrState, 'pending' | 'success' | 'failure' | 'error'> = {
  not_ready: 'pending',
  pending: 'pending',
  testing: 'pending',
  tests_passed: 'pending',
  pending_failure: 'pending',
  merged: 'success',
  failed: 'failure',
  cancelled: 'error',
};

type Params = { owner: string; repo: string };

/**
 * The status check, the comment and the state label, as switched on. Telling the author never holds up the queue: a PR or
 * commit GitHub no longer has, a locked PR or a missing permission (404, 422, 403 other than a rate
 * limit) is logged and skipped; transient failures are thrown so the action is repeated.
 */
export async function reportPrState(
  api: GitHubApi,
  client: GitHubClient,
  p: Params,
  input: ReportInput,
  defaults: TalkBack,
): Promise<void> {
  const skipGone = (what: string) => (err: unknown) => {
    const status = statusOf(err);
    const refused =
      status === 404 || status === 422 || (status === 403 && !/rate limit/i.test(messageOf(err)));
    if (!refused) throw err;
    client.log.warn(
      { repo: `${p.owner}/${p.repo}`, pr: input.prNumber },
      `${what} skipped: ${messageOf(err)}`,
    );
  };
  if (input.statusCheck ?? defaults.statusCheck) {
    await api
      .request('POST /repos/{owner}/{repo}/statuses/{sha}', {
        ...p,
        sha: input.headSha,
        state: STATUS_STATES[input.state],
        context: STATUS_CONTEXT,
        description: statusDescription(input),
        ...(input.targetUrl === undefined ? {} : { target_url: input.targetUrl }),
      })
      .catch(skipGone('status check'));
  }
  if (input.comments ?? defaults.comments) {
    await upsertComment(api, client, p, input.prNumber, commentBody(input)).catch(skipGone('comment'));
  }
  if (input.stateLabels === true) {
    await syncStateLabel(api, p, input.prNumber, input.state).catch(skipGone('state label'));
  }
}

export function statusDescription(input: { state: PrState; reason: string }): string {
  const text = `${LABELS[input.state]}${input.reason.trim() === '' ? '' : `: ${input.reason.trim()}`}`;
  const chars = Array.from(text.replace(/\s+/g, ' '));
  return chars.length <= MAX_DESCRIPTION
    ? chars.join('')
    : `${chars.slice(0, MAX_DESCRIPTION - 1).join('')}…`;
}

export function commentBody(input: ReportInput): string {
  const parts = [COMMENT_MARKER, `**Merge queue: ${LABELS[input.state]}**`];
  if (input.reason.trim() !== '') parts.push(input.reason.trim());
  if (input.details !== undefined && input.details.trim() !== '') parts.push(input.details.trim());
  parts.push(`<sub>Head ${input.headSha.slice(0, 12)}. Mainline updates this comment as the PR moves.</sub>`);
  return parts.join('\n\n');
}

/**
 * Edits the PR's comment that starts with the marker, or creates it. Creation is not repeated blindly:
 * after a failed POST (whose answer may be lost) the comments are listed again first.
 */
async function upsertComment(
  api: GitHubApi,
  client: GitHubClient,
  p: Params,
  number: number,
  body: string,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const existing = await findComment(api, p, number);
    if (existing !== null) {
      if (existing.body === body) return;
      await api.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', {
        ...p,
        comment_id: existing.id,
        body,
      });
      return;
    }
    try {
      await api.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        ...p,
        issue_number: number,
        body,
        request: { retries: 0 },
      });
      return;
    } catch (err) {
      if (!isTransient(err) || attempt >= client.retries) throw err;
      client.log.warn(
        { repo: `${p.owner}/${p.repo}`, pr: number, attempt, status: statusOf(err) },
        'creating the status comment failed; looking for it before trying again',
      );
      await client.backoff(attempt);
    }
  }
}

async function findComment(api: GitHubApi, p: Params, number: number): Promise<GhComment | null> {
  const comments = (await api.paginate('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
    ...p,
    issue_number: number,
    per_page: 100,
  })) as GhComment[];
  return comments.find((c) => (c.body ?? '').trimStart().startsWith(COMMENT_MARKER)) ?? null;
}
