import {
  isTerminal,
  type PrHead,
  type QueueAction,
  type QueueEvent,
  type QueueState,
} from '../../domain/queue/index.ts';
import { deleteTestPr, findTestPr, saveTestPr } from '../../store/forge/github.ts';
import {
  findQueueById,
  markActionDone,
  markActionFailed,
  markActionWaiting,
  type QueueActionRow,
  type QueueRow,
} from '../../store/queue/queues.ts';
import { findRepoAddress } from '../../store/tenancy/repos.ts';
import type { AppContext } from '../context.ts';
import { type Forge, type ForgeRepo, pullRequestsOf } from '../ports.ts';
import { applyEvent, discoveredEvent, queueStateOf } from './apply.ts';
import { deliverStatuses } from './git-api.ts';
import { labelSettingsOf } from './label-settings.ts';
import { flakeProtectionNote } from './prs.ts';
import type { StoredCreateTestRun, StoredQueueAction } from './row-shape.ts';

/** An action failing this many times in a row is answered with a failure event. */
export const MAX_ACTION_ATTEMPTS = 5;

/** How long a merge the forge answered "not yet" (ok 'pending') waits before it is asked again. */
export const MERGE_RECHECK_MS = 10_000;

/** A queue as a runner pass drives it: its row and its repository as the forge addresses it. */
export interface DrivenQueue {
  readonly row: QueueRow;
  readonly repo: ForgeRepo;
}

/** How one outbox action went: done, or failed (to be retried, or given up and answered with a failure). */
export type ActionOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly error: unknown; readonly gaveUp: boolean };

/**
 * Carries out a queue's outbox actions through the forge, feeding each result back as an engine
 * event, and notices outside changes (target pushed, PR heads updated) the forge cannot push to us.
 */
export class QueueExecutor {
  readonly #ctx: AppContext;
  readonly #forge: Forge;
  /** `<queue>@<target head>` whose required statuses were read from the forge. */
  readonly #discovered = new Set<string>();

  constructor(ctx: AppContext, forge: Forge) {
    this.#ctx = ctx;
    this.#forge = forge;
  }

  /** The queue and its repository; undefined when the queue is gone. */
  async load(queueId: string): Promise<DrivenQueue | undefined> {
    const row = await findQueueById(this.#ctx.db, queueId);
    if (row === undefined) return undefined;
    return { row, repo: await findRepoAddress(this.#ctx.db, row.repo_id) };
  }

  /** Compares the queue with the forge: target moves, new PR commits, required statuses. */
  async observe(queue: DrivenQueue): Promise<void> {
    await this.#observe(queue.row.id, queue.repo, await queueStateOf(this.#ctx, queue.row));
  }

  /** The queue's row and state as they are now; undefined when the queue is gone. */
  async #current(queueId: string): Promise<{ row: QueueRow; state: QueueState } | undefined> {
    const row = await findQueueById(this.#ctx.db, queueId);
    return row === undefined ? undefined : { row, state: await queueStateOf(this.#ctx, row) };
  }

  /** Wakes the queue's timers (a `tick` event) when its wake time has come. */
  async tickIfDue(queueId: string): Promise<void> {
    const fresh = await findQueueById(this.#ctx.db, queueId);
    if (fresh?.wake_at != null && fresh.wake_at <= this.#ctx.now())
      await this.#apply(queueId, { type: 'tick' });
  }

  /**
   * Carries out one outbox action and marks it done; a failure is recorded for a retry, and after
   * MAX_ACTION_ATTEMPTS answered with a failure event (so the PR leaves the queue with the reason).
   * A merge the forge will make on its own later (ok 'pending') stays not done, without counting as
   * a failure, and is asked again after MERGE_RECHECK_MS; the actions after it go on meanwhile.
   */
  async run(queueId: string, repo: ForgeRepo, action: QueueActionRow): Promise<ActionOutcome> {
    const db = this.#ctx.db;
    try {
      const waiting = await this.#execute(
        queueId,
        repo,
        JSON.parse(action.action) as StoredQueueAction,
        action,
      );
      if (waiting !== undefined) {
        await markActionWaiting(db, action.id, this.#ctx.now() + MERGE_RECHECK_MS, waiting);
        return { ok: true };
      }
      await markActionDone(db, action.id, this.#ctx.now());
      return { ok: true };
    } catch (error) {
      const message = String((error as Error).message);
      await markActionFailed(db, action.id, message);
      if (action.attempts + 1 < MAX_ACTION_ATTEMPTS) return { ok: false, error, gaveUp: false };
      await this.#giveUp(queueId, JSON.parse(action.action) as StoredQueueAction, message);
      await markActionDone(db, action.id, this.#ctx.now());
      return { ok: false, error, gaveUp: true };
    }
  }

  /** An action that keeps failing is answered with a failure, so the PR leaves the queue with the reason instead of stalling it. */
  async #giveUp(queueId: string, action: StoredQueueAction, message: string): Promise<void> {
    const reason = `the forge failed ${MAX_ACTION_ATTEMPTS} times: ${message}`;
    if (action.type === 'create_test_run') {
      await this.#apply(queueId, {
        type: 'test_branch_failed',
        runId: action.runId,
        conflictPr: null,
        reason,
      });
    } else if (action.type === 'merge_pr') {
      await this.#apply(queueId, { type: 'merge_failed', prNumber: action.prNumber, reason });
    }
  }

  #apply(queueId: string, event: QueueEvent) {
    return applyEvent(this.#ctx, queueId, event, this.#ctx.now());
  }

  /** What the plain-git forge cannot push to us: target moves, new PR commits, required statuses. */
  async #observe(queueId: string, repo: ForgeRepo, state: QueueState): Promise<void> {
    const head = await this.#forge.head(repo, state.branch);
    if (head !== null && !this.#discovered.has(`${queueId}@${head}`)) {
      const required = await this.#forge.requiredStatuses(repo, state.branch);
      await this.#apply(queueId, discoveredEvent(required));
      this.#discovered.add(`${queueId}@${head}`);
    }
    if (head !== null && head !== state.targetHead && state.merging === null) {
      await this.#apply(queueId, { type: 'target_moved', sha: head });
    }
    // The PR being merged is left to its merge action: after a crash the forge may already call it
    // merged, and the repeated (idempotent) merge reports that, rather than a spurious cancel first.
    const watched = state.prs
      .values()
      .filter((entry) => !isTerminal(entry.state) && state.merging?.prNumber !== entry.number);
    // All at once where the forge can (one git process for every head), else one by one.
    const read = await pullRequestsOf(
      this.#forge,
      repo,
      watched.map((entry) => entry.number),
    );
    for (const entry of watched) {
      const pr = read.get(entry.number) ?? null;
      if (pr === null || pr.state !== 'open') {
        await this.#apply(queueId, {
          type: 'pr_cancelled',
          prNumber: entry.number,
          reason: 'The pull request was closed or deleted',
        });
      } else if (pr.headSha !== entry.headSha) {
        await this.#apply(queueId, { type: 'pr_head_updated', prNumber: entry.number, headSha: pr.headSha });
      }
    }
  }

  /** Carries out the action; answers what it waits for when the forge said "not yet" (a merge). */
  async #execute(
    queueId: string,
    repo: ForgeRepo,
    action: StoredQueueAction,
    row: QueueActionRow,
  ): Promise<string | undefined> {
    switch (action.type) {
      case 'create_test_run': {
        const prHeads = action.prHeads ?? (await this.#runHeads(queueId, action.runId));
        // A run no longer in the state ended, and its branch's deletion is queued after this: nothing to build.
        if (prHeads === undefined) return;
        const built = await this.#forge.buildTestBranch(repo, { ...action, prHeads });
        if (!built.ok) {
          await this.#apply(queueId, {
            type: 'test_branch_failed',
            runId: action.runId,
            conflictPr: built.conflictPr,
            reason: built.reason,
          });
          return;
        }
        await this.#apply(queueId, { type: 'test_branch_built', runId: action.runId, sha: built.sha });
        if (action.createDraftPr) await this.#openDraft(queueId, repo, action);
        await deliverStatuses(this.#ctx, this.#forge, repo, built.sha);
        return;
      }
      case 'delete_test_branch': {
        const draft = await findTestPr(this.#ctx.db, repo.id, action.testBranch);
        if (draft !== undefined) {
          await this.#forge.closePullRequest?.(repo, draft.pr_number);
          await deleteTestPr(this.#ctx.db, repo.id, action.testBranch);
        }
        await this.#forge.deleteBranch(repo, action.testBranch);
        return;
      }
      case 'merge_pr':
        return this.#merge(queueId, repo, action, row);
      case 'report_pr_state':
        await this.#report(queueId, repo, action);
        return;
    }
  }

  /**
   * The heads a run's test branch merges, from the run in the state (row-shape.ts: a create_test_run is
   * stored without them); undefined when the run has left the state.
   */
  async #runHeads(queueId: string, runId: string): Promise<readonly PrHead[] | undefined> {
    return (await this.#current(queueId))?.state.runs[runId]?.prHeads;
  }

  /** The PR's status check and comment, as the queue's settings ask; says why when flake protection let it through. */
  async #report(
    queueId: string,
    repo: ForgeRepo,
    action: Extract<QueueAction, { type: 'report_pr_state' }>,
  ): Promise<void> {
    const current = await this.#current(queueId);
    const state = current?.state;
    const settings = state?.settings;
    const details =
      state === undefined ? undefined : await flakeProtectionNote(this.#ctx, queueId, state, action.prNumber);
    await this.#forge.reportPrState(repo, {
      prNumber: action.prNumber,
      headSha: action.headSha,
      state: action.state,
      reason: action.reason,
      comments: settings?.commentsEnabled ?? true,
      statusCheck: settings?.statusCheckEnabled ?? true,
      stateLabels: current !== undefined && labelSettingsOf(current.row).stateLabelsEnabled,
      ...(details !== undefined ? { details } : {}),
    });
  }

  /** createPrsForTestingBranches: a draft PR for the test branch, so CI that runs on PRs tests it; closed with the branch. */
  async #openDraft(queueId: string, repo: ForgeRepo, action: StoredCreateTestRun): Promise<void> {
    if ((await findTestPr(this.#ctx.db, repo.id, action.testBranch)) !== undefined) return;
    const base = (await this.#current(queueId))?.state.branch;
    if (base === undefined) return;
    const prs = action.testedPrs.map((n) => `#${n}`).join(', ');
    const number = await this.#forge.createDraftPullRequest?.(repo, {
      testBranch: action.testBranch,
      base,
      title: `Mainline test run for ${prs}`,
      body: `Merge-queue test branch \`${action.testBranch}\`: ${base} with ${prs} merged in. Opened by Mainline so CI runs on it; closed when the run ends. Do not merge.`,
    });
    // A forge without pull requests (plain git) has nothing to open for the branch.
    if (number === undefined || number === null) return;
    await saveTestPr(this.#ctx.db, {
      repo_id: repo.id,
      test_branch: action.testBranch,
      pr_number: number,
      created_at: this.#ctx.now(),
    });
  }

  /**
   * Asks the forge to merge; answers what the merge waits for when the forge will make it later
   * (ok 'pending'). A merge that has waited longer than the queue's testingTimeoutMinutes since it was
   * decided, or whose PR was cancelled while it waited, is asked one last time with finalAttempt, and
   * fails if it is still not merged.
   */
  async #merge(
    queueId: string,
    repo: ForgeRepo,
    action: Extract<QueueAction, { type: 'merge_pr' }>,
    row: QueueActionRow,
  ): Promise<string | undefined> {
    const state = (await this.#current(queueId))?.state;
    const waitMs = (state?.settings.testingTimeoutMinutes ?? 300) * 60_000;
    const entry = state?.prs.get(action.prNumber);
    // A waiting merge is asked a last time (the forge withdraws its request unless it can merge now)
    // once it has waited too long, or once the PR was cancelled meanwhile (`/mainline cancel`).
    const cancelled = entry !== undefined && entry.state === 'cancelled';
    const finalAttempt = row.not_before !== null && (cancelled || this.#ctx.now() >= row.created_at + waitMs);
    // An action saved before merge_pr carried the tip takes it from the state: while this merge is in
    // flight the state's targetHead stays the tip the merge was decided on. Without such a state (the
    // merge is no longer the one in flight) there is nothing to compare with, so no check; an empty
    // tip (a branch that did not exist when the queue was made) cannot be compared either.
    const inFlight = state?.merging?.prNumber === action.prNumber ? state.targetHead : undefined;
    const expectedTargetSha = action.expectedTargetSha ?? inFlight;
    const merged = await this.#forge.mergePullRequest(repo, {
      targetBranch: state?.branch ?? '',
      prNumber: action.prNumber,
      prTitle: entry?.title ?? `#${action.prNumber}`,
      headSha: action.expectedHeadSha,
      method: action.method,
      ...(expectedTargetSha ? { expectedTargetSha } : {}),
      ...(finalAttempt ? { finalAttempt } : {}),
    });
    if (merged.ok === 'pending' && !finalAttempt) return merged.reason;
    await this.#apply(
      queueId,
      merged.ok === true
        ? { type: 'merge_succeeded', prNumber: action.prNumber, newTargetSha: merged.newTargetSha }
        : merged.ok === 'pending'
          ? {
              type: 'merge_failed',
              prNumber: action.prNumber,
              reason: cancelled
                ? `cancelled while waiting: ${merged.reason}`
                : `still not merged after ${waitMs / 60_000} minutes: ${merged.reason}`,
            }
          : {
              type: 'merge_failed',
              prNumber: action.prNumber,
              reason: merged.reason,
              ...(merged.targetMovedTo !== undefined ? { targetMovedTo: merged.targetMovedTo } : {}),
            },
    );
    return undefined;
  }
}
