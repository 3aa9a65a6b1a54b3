import { AppError } from '../../domain/errors.ts';
import { labelCommand } from '../../domain/github-labels.ts';
import { getPrRecord, isTerminal } from '../../domain/queue/index.ts';
import { findQueue, listQueues } from '../../store/queue/queues.ts';
import type { AppContext, Caller } from '../context.ts';
import type { Forge, ForgeRepo } from '../ports.ts';
import { queueStateOf } from '../queue/apply.ts';
import { labelSettingsOf } from '../queue/label-settings.ts';
import { cancelPullRequest, submitPullRequest } from '../queue/prs.ts';
import { roleRefusalOf, type WriterCache } from './writers.ts';

/** The parts of a `pull_request` labeled/unlabeled delivery read here. */
export interface LabelPayload {
  action?: string;
  number?: number;
  label?: { name?: string };
  sender?: { login?: string };
  pull_request?: { number?: number; head?: { sha?: string }; base?: { ref?: string } };
}

/**
 * A label applied to or removed from a PR (docs/github.md, Labels). Applying the queue's enqueueing
 * label submits the PR to the queue of its base branch; removing it cancels the PR when label commands
 * are on. Either only when the user who did it (the delivery's sender) has write access to the
 * repository, as for `/mainline` commands: otherwise nothing changes in the queue, the label is left
 * as it is, and the PR's comment says why (when the queue comments). Without label commands the
 * queue takes the enqueueing label off once it picked the PR up, as Trunk does.
 */
export async function labelEvent(
  ctx: AppContext,
  forge: Forge,
  caller: Caller,
  repo: ForgeRepo,
  p: LabelPayload,
  writers: WriterCache,
): Promise<string> {
  const label = p.label?.name;
  const number = p.pull_request?.number ?? p.number;
  const base = p.pull_request?.base?.ref;
  if (label === undefined || number === undefined || base === undefined)
    return `pull_request ${p.action}: no label or pull request`;
  // Most labels are no queue's business: answered without asking GitHub anything.
  const queues = await listQueues(ctx.db, [repo.id]);
  const named = queues.some((q) => labelCommand(labelSettingsOf(q), 'labeled', label) !== null);
  if (!named) return `label "${label}" on #${number}: not an enqueueing label`;
  const row = await findQueue(ctx.db, repo.id, base);
  if (row === undefined) return `label "${label}" on #${number}: no queue for ${base}`;
  const settings = labelSettingsOf(row);
  const command = labelCommand(settings, p.action, label);
  if (command === null) return `label "${label}" ${p.action ?? ''} on #${number}: nothing to do`;
  const state = await queueStateOf(ctx, row);
  const entry = getPrRecord(state, number);
  const inQueue = entry !== undefined && !isTerminal(entry.state);
  if (command === 'cancel' && !inQueue) return `label "${label}" removed from #${number}: not in the queue`;

  const what = `${command === 'submit' ? 'Adding' : 'Removing'} the label "${label}"`;
  const tell = (reason: string) =>
    forge.reportPrState(repo, {
      prNumber: number,
      headSha: entry?.headSha ?? p.pull_request?.head?.sha ?? '',
      state: entry?.state ?? 'not_ready',
      reason,
      comments: state.settings.commentsEnabled,
      statusCheck: false,
    });
  const sender = p.sender?.login;
  const refusal =
    sender === undefined
      ? 'the delivery names no sender'
      : await roleRefusalOf(forge, writers, repo, sender, ctx.now());
  if (refusal !== null) {
    await tell(`${what} did not change the queue: ${refusal}`);
    return `label "${label}" ${p.action} on #${number} by ${sender ?? 'nobody'} refused: ${refusal}`;
  }

  const ref = { host: repo.host, owner: repo.owner, name: repo.name };
  const body = { repo: ref, targetBranch: base, pr: { number } };
  try {
    if (command === 'submit') await submitPullRequest(ctx, caller, forge, body);
    else await cancelPullRequest(ctx, caller, body);
  } catch (error) {
    // A refusal (closed PR, paused queue…) is an answer, not a failure to retry.
    if (!(error instanceof AppError)) throw error;
    await tell(`${what} did not change the queue: ${error.message}`);
    return `label "${label}" ${p.action} on #${number} refused: ${error.message}`;
  }
  const done = `label "${label}" on #${number}: ${command === 'submit' ? 'submitted' : 'cancelled'} by @${sender}`;
  if (command === 'submit' && !settings.labelCommandsEnabled) {
    // Picked up: the label comes off. Should GitHub refuse, the PR is queued all the same (applying the
    // label again only submits it again, which changes nothing).
    try {
      await forge.removeLabel?.(repo, number, label);
    } catch (error) {
      return `${done}; the label stays: ${(error as Error).message}`;
    }
  }
  return done;
}
