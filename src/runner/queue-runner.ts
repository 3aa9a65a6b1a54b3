import { randomUUID } from 'node:crypto';
import type { AppContext } from '../app/context.ts';
import { type Forge, type ForgeRepo, pullRequestsOf } from '../app/ports.ts';
import { applyEvent, discoveredEvent, queueStateOf } from '../app/queue/apply.ts';
import { deliverStatuses } from '../app/queue/git-api.ts';
import { labelSettingsOf } from '../app/queue/label-settings.ts';
import { flakeProtectionNote } from '../app/queue/prs.ts';
import { isTerminal, type QueueAction, type QueueEvent, type QueueState } from '../domain/queue/index.ts';
import { deleteTestPr, findTestPr, saveTestPr } from '../store/github.ts';
import {
  acquireLease,
  findQueueById,
  listQueues,
  markActionDone,
  markActionFailed,
  pendingActions,
  queuesNeedingWork,
  queuesWithLivePrs,
  releaseLease,
} from '../store/queues.ts';
import { type Background, runPeriodically } from './periodic.ts';

/** A runner holds a queue this long after its last pass; a crashed runner's queues are taken over after it. */
export const LEASE_MS = 30_000;
const ACTIONS_PER_PASS = 50;
/** An action failing this many times in a row is answered with a failure event. */
const MAX_ACTION_ATTEMPTS = 5;
/** How often a queue's target and PR heads are compared with the forge (git has no webhooks). */
export const OBSERVE_EVERY_MS = 5_000;

type Log = {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
};

/**
 * Drives merge queues: for each queue with work it takes the queue's lease (so one runner at a time
 * drives it, across replicas), notices outside changes (target pushed, PR heads updated), wakes timers,
 * and carries out the outbox actions through the forge, feeding each result back as an engine event.
 */
export class QueueRunner {
  /** This runner's lease owner id; a restarted single server passes its stable id to resume at once. */
  readonly owner: string;
  readonly #ctx: AppContext;
  readonly #forge: Forge;
  readonly #log: Log;
  readonly #held = new Set<string>();
  /** When each queue was last compared with the forge. */
  readonly #observedAt = new Map<string, number>();
  /** `<queue>@<target head>` whose required statuses were read from the forge. */
  readonly #discovered = new Set<string>();

  constructor(ctx: AppContext, forge: Forge, log: Log, options: { owner?: string } = {}) {
    this.owner = options.owner ?? randomUUID();
    this.#ctx = ctx;
    this.#forge = forge;
    this.#log = log;
  }

  /** One pass over every queue that has work or might have outside changes. */
  async runOnce(): Promise<void> {
    const now = this.#ctx.now();
    const busy = new Set(await queuesNeedingWork(this.#ctx.db, now));
    const live = await queuesWithLivePrs(this.#ctx.db);
    const active = (await listQueues(this.#ctx.db, undefined)).filter(
      (q) => busy.has(q.id) || live.has(q.id),
    );
    for (const queue of active) {
      if (!(await acquireLease(this.#ctx.db, queue.id, this.owner, now, now + LEASE_MS))) continue;
      this.#held.add(queue.id);
      await this.drive(queue.id).catch((err: unknown) =>
        this.#log.error({ err, queue: queue.id }, 'queue pass failed'),
      );
    }
  }

  /** Gives up every lease (on shutdown), so another replica takes over at once. */
  async releaseAll(): Promise<void> {
    for (const id of this.#held) await releaseLease(this.#ctx.db, id, this.owner);
    this.#held.clear();
  }

  async drive(queueId: string): Promise<void> {
    const row = await findQueueById(this.#ctx.db, queueId);
    if (row === undefined) return;
    const repo = await this.#repo(row.repo_id);
    const now = this.#ctx.now();
    const every = this.#forge.pollIntervalMs?.(repo) ?? OBSERVE_EVERY_MS;
    if (now - (this.#observedAt.get(queueId) ?? Number.NEGATIVE_INFINITY) >= every) {
      this.#observedAt.set(queueId, now);
      await this.#observe(queueId, repo, await queueStateOf(this.#ctx.db, row));
    }
    const fresh = await findQueueById(this.#ctx.db, queueId);
    if (fresh?.wake_at != null && fresh.wake_at <= this.#ctx.now())
      await this.#apply(queueId, { type: 'tick' });
    let renewedAt = this.#ctx.now();
    for (const action of await pendingActions(this.#ctx.db, queueId, ACTIONS_PER_PASS)) {
      // A long pass renews its lease as it goes (a pass may outlast LEASE_MS), and stops if another
      // runner took the queue meanwhile: one runner at a time drives a queue.
      const at = this.#ctx.now();
      if (at - renewedAt >= LEASE_MS / 3) {
        if (!(await acquireLease(this.#ctx.db, queueId, this.owner, at, at + LEASE_MS))) {
          this.#held.delete(queueId);
          this.#log.warn({ queue: queueId }, 'queue lease lost during a pass; stopping it');
          return;
        }
        renewedAt = at;
      }
      try {
        await this.#execute(queueId, repo, JSON.parse(action.action) as QueueAction);
        await markActionDone(this.#ctx.db, action.id, this.#ctx.now());
      } catch (err) {
        const message = String((err as Error).message);
        await markActionFailed(this.#ctx.db, action.id, message);
        if (action.attempts + 1 >= MAX_ACTION_ATTEMPTS) {
          await this.#giveUp(queueId, JSON.parse(action.action) as QueueAction, message);
          await markActionDone(this.#ctx.db, action.id, this.#ctx.now());
          this.#log.error({ err, queue: queueId, action: action.id }, 'queue action failed for good');
        } else {
          this.#log.warn(
            { err, queue: queueId, action: action.id },
            'queue action failed; it will be retried',
          );
        }
        return;
      }
    }
  }

  /** An action that keeps failing is answered with a failure, so the PR leaves the queue with the reason instead of stalling it. */
  async #giveUp(queueId: string, action: QueueAction, message: string): Promise<void> {
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

  async #repo(repoId: string): Promise<ForgeRepo> {
    return this.#ctx.db
      .selectFrom('repositories')
      .select(['id', 'host', 'owner', 'name'])
      .where('id', '=', repoId)
      .executeTakeFirstOrThrow();
  }

  #apply(queueId: string, event: QueueEvent) {
    return applyEvent(this.#ctx.db, queueId, event, this.#ctx.now());
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
    const watched = Object.values(state.prs).filter(
      (entry) => !isTerminal(entry.state) && state.merging?.prNumber !== entry.number,
    );
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

  async #execute(queueId: string, repo: ForgeRepo, action: QueueAction): Promise<void> {
    switch (action.type) {
      case 'create_test_run': {
        const built = await this.#forge.buildTestBranch(repo, action);
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
        await this.#merge(queueId, repo, action);
        return;
      case 'report_pr_state':
        await this.#report(queueId, repo, action);
        return;
    }
  }

  /** The PR's status check and comment, as the queue's settings ask; says why when flake protection let it through. */
  async #report(
    queueId: string,
    repo: ForgeRepo,
    action: Extract<QueueAction, { type: 'report_pr_state' }>,
  ): Promise<void> {
    const row = await findQueueById(this.#ctx.db, queueId);
    const state = row === undefined ? undefined : await queueStateOf(this.#ctx.db, row);
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
      stateLabels: row !== undefined && labelSettingsOf(row).stateLabelsEnabled,
      ...(details !== undefined ? { details } : {}),
    });
  }

  /** createPrsForTestingBranches: a draft PR for the test branch, so CI that runs on PRs tests it; closed with the branch. */
  async #openDraft(
    queueId: string,
    repo: ForgeRepo,
    action: Extract<QueueAction, { type: 'create_test_run' }>,
  ): Promise<void> {
    if ((await findTestPr(this.#ctx.db, repo.id, action.testBranch)) !== undefined) return;
    const row = await findQueueById(this.#ctx.db, queueId);
    const base = row === undefined ? undefined : (await queueStateOf(this.#ctx.db, row)).branch;
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

  async #merge(
    queueId: string,
    repo: ForgeRepo,
    action: Extract<QueueAction, { type: 'merge_pr' }>,
  ): Promise<void> {
    const row = await findQueueById(this.#ctx.db, queueId);
    const state = row === undefined ? undefined : await queueStateOf(this.#ctx.db, row);
    const entry = state?.prs[String(action.prNumber)];
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
    });
    await this.#apply(
      queueId,
      merged.ok
        ? { type: 'merge_succeeded', prNumber: action.prNumber, newTargetSha: merged.newTargetSha }
        : {
            type: 'merge_failed',
            prNumber: action.prNumber,
            reason: merged.reason,
            ...(merged.targetMovedTo !== undefined ? { targetMovedTo: merged.targetMovedTo } : {}),
          },
    );
  }
}

/** Runs passes every `intervalMs` (never two at once) until stopped; leases are released on stop. */
export function startQueueRunner(runner: QueueRunner, intervalMs: number, log: Log): Background {
  const loop = runPeriodically(
    () => runner.runOnce(),
    intervalMs,
    (err) => log.error({ err }, 'queue runner pass failed'),
  );
  return {
    stop: async () => {
      await loop.stop();
      await runner.releaseAll();
    },
  };
}
