import { randomUUID } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';
import type { FlakeProtection } from '../../domain/flake-protection.ts';
import type { LabelSettings } from '../../domain/github-labels.ts';
import { createQueueState, listQueuedPrs, type Mode, type SettingsPatch } from '../../domain/queue/index.ts';
import { setFlakeProtection } from '../../store/queue/flake.ts';
import { findQueue, insertQueueIfAbsent, deleteQueue as removeQueue } from '../../store/queue/queues.ts';
import type { AppContext, Caller } from '../context.ts';
import { assertForgeGranted } from '../forge-grants.ts';
import type { Forge } from '../ports.ts';
import { ensureRepository, findRepository, type RepoRef, repoFullName } from '../repositories.ts';
import { applyEvent, type LoadedQueue, loadQueue } from './apply.ts';
import { flakeProtectionOf } from './flake-judge.ts';
import { updateLabelSettings } from './label-settings.ts';
import { queueConfigRecord } from './records.ts';

/** The caller's queue for a target branch, or 404 naming what is missing. */
export async function findQueueOf(
  ctx: AppContext,
  caller: Caller,
  repo: RepoRef,
  branch: string,
): Promise<LoadedQueue & { repoId: string }> {
  await assertForgeGranted(ctx, caller, repo);
  const repository = await findRepository(ctx.db, caller, repo);
  const row = await findQueue(ctx.db, repository.id, branch);
  if (row === undefined) {
    throw new AppError(
      'QUEUE_NOT_FOUND',
      `No merge queue for branch "${branch}" of ${repoFullName(repository)}; create one with createQueue`,
    );
  }
  return { ...(await loadQueue(ctx, row)), repoId: repository.id };
}

/** createQueue: a new running queue (the repository is created on first use); 409 if the branch has one. */
export async function createQueue(
  ctx: AppContext,
  caller: Caller,
  forge: Forge,
  body: { repo: RepoRef; targetBranch: string; mode?: Mode | undefined; concurrency?: number | undefined },
): Promise<void> {
  await assertForgeGranted(ctx, caller, body.repo);
  const now = ctx.now();
  const { repository } = await ensureRepository(ctx.db, caller, body.repo, now);
  const head = (await forge.head(repository, body.targetBranch)) ?? '';
  const state = createQueueState({
    branch: body.targetBranch,
    targetHead: head,
    idSeed: randomUUID(),
    ...(body.mode !== undefined ? { mode: body.mode } : {}),
    ...(body.concurrency !== undefined ? { concurrency: body.concurrency } : {}),
  });
  const row = {
    id: randomUUID(),
    repo_id: repository.id,
    branch: body.targetBranch,
    header: JSON.stringify(state),
    version: 0,
    created_at: now,
    updated_at: now,
    wake_at: null,
    lease_owner: null,
    lease_until: null,
  };
  if (!(await insertQueueIfAbsent(ctx.db, row))) {
    throw new AppError(
      'ALREADY_EXISTS',
      `A merge queue for branch "${body.targetBranch}" of ${repoFullName(repository)} already exists`,
    );
  }
}

/** updateQueue: settings and requested state go through the engine, which answers with the full record. */
export async function updateQueue(
  ctx: AppContext,
  caller: Caller,
  forge: Forge,
  body: {
    repo: RepoRef;
    targetBranch: string;
    flakeProtection?: FlakeProtection | undefined;
  } & SettingsPatch &
    Partial<LabelSettings>,
) {
  const queue = await findQueueOf(ctx, caller, body.repo, body.targetBranch);
  const {
    repo: _repo,
    targetBranch: _branch,
    flakeProtection: mode,
    extensionEnabled,
    enqueueingLabel,
    labelCommandsEnabled,
    stateLabelsEnabled,
    ...patch
  } = body;
  // First, since a label GitHub cannot have is refused before anything is stored.
  const labels = await updateLabelSettings(ctx.db, queue.row, {
    ...(extensionEnabled !== undefined ? { extensionEnabled } : {}),
    ...(enqueueingLabel !== undefined ? { enqueueingLabel } : {}),
    ...(labelCommandsEnabled !== undefined ? { labelCommandsEnabled } : {}),
    ...(stateLabelsEnabled !== undefined ? { stateLabelsEnabled } : {}),
  });
  if (mode !== undefined) await setFlakeProtection(ctx.db, queue.row.id, mode);
  const { state } = await applyEvent(ctx, queue.row.id, { type: 'settings_updated', patch }, ctx.now());
  const row = mode === undefined ? queue.row : { ...queue.row, flake_protection: mode };
  const flakeProtection = await flakeProtectionOf(
    forge,
    { ...body.repo, id: queue.repoId },
    row,
    body.targetBranch,
  );
  return { ...queueConfigRecord(state), ...labels, flakeProtection };
}

/** deleteQueue: refused with 400 while PRs are in it (drain it first). */
export async function deleteQueue(
  ctx: AppContext,
  caller: Caller,
  body: { repo: RepoRef; targetBranch: string },
): Promise<void> {
  const { row, state } = await findQueueOf(ctx, caller, body.repo, body.targetBranch);
  const inQueue = listQueuedPrs(state).length;
  if (inQueue > 0) {
    throw new AppError(
      'BAD_REQUEST',
      `The queue still has ${inQueue} pull request(s); drain it (updateQueue state "draining") or cancel them first`,
    );
  }
  await removeQueue(ctx.db, row.id);
}
