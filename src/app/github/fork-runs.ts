import { AppError } from '../../domain/errors.ts';
import { forkRunRefusal } from '../../domain/fork-run.ts';
import { getPrRecord } from '../../domain/queue/index.ts';
import { findGrant, listGrants } from '../../store/forge/grants.ts';
import type { AppContext, Caller } from '../context.ts';
import type { Forge, ForgeRepo } from '../ports.ts';
import { findQueueOf } from '../queue/queues.ts';
import type { RepoRef } from '../repositories.ts';

/** What setImpactedTargets names: the repository, the queue's branch and the PR head. */
export interface ForkRunRequest {
  readonly repo: RepoRef;
  readonly targetBranch: string;
  readonly pr: { readonly number: number | string; readonly sha: string };
}

/** Submissions whose PR can still change head: only these say what the queue knows of the head. */
const OVER = new Set(['merged', 'failed', 'cancelled']);

function refused(runId: number, reason: string): AppError {
  return new AppError('INVALID_TOKEN', `x-forked-workflow-run-id ${runId} was not accepted: ${reason}`);
}

/**
 * The caller a fork pull request's GitHub Actions run stands for in one setImpactedTargets call
 * (`x-forked-workflow-run-id`, sent without a token because a fork's run gets no secrets), after
 * GitHub confirmed the claim; otherwise 401 INVALID_TOKEN saying what did not hold.
 *
 * The organization is the one granted the repository's GitHub owner (docs/github.md, Forge
 * ownership), and it must have a queue for the branch. GitHub must then say that run `runId` is a
 * run of that repository, started by a fork's pull_request, still in progress and recent, at
 * exactly `pr.sha` (forkRunRefusal), and that `pr.sha` is the current head of the open PR
 * `pr.number`; the queue, if it holds the PR, must know it at that head too. Nothing is cached:
 * every call asks GitHub again. The caller it returns is for this request only.
 */
export async function forkRunCaller(
  ctx: AppContext,
  forge: Forge,
  runId: number,
  body: ForkRunRequest,
  log: { warn(o: object, m: string): void },
): Promise<Caller> {
  const github = ctx.config.github;
  const { repo } = body;
  const fullName = `${repo.owner}/${repo.name}`;
  // One answer for "not on GitHub", "nobody was granted the owner" and "no such queue": an anonymous
  // caller learns nothing about who uses this server.
  const unverifiable = refused(
    runId,
    `a fork's run is accepted only for a repository on ${github?.host ?? 'GitHub (not configured on this server)'} whose owner the operator granted to an organization, and that has a merge queue for "${body.targetBranch}"; otherwise send an API token in x-api-token`,
  );
  if (github === undefined || repo.host.toLowerCase() !== github.host.toLowerCase()) throw unverifiable;
  const grant = await findGrant(ctx.db, repo.host.toLowerCase(), repo.owner.toLowerCase());
  if (grant === undefined) throw unverifiable;
  const orgSlug = (await listGrants(ctx.db, grant.org_id))[0]?.org_slug ?? '';
  const caller: Caller = {
    tokenId: `fork-run:${runId}`,
    tokenName: `GitHub Actions run ${runId} (fork PR #${body.pr.number})`,
    orgId: grant.org_id,
    orgSlug,
  };
  let queue: Awaited<ReturnType<typeof findQueueOf>>;
  try {
    queue = await findQueueOf(ctx, caller, repo, body.targetBranch);
  } catch (error) {
    if (error instanceof AppError && error.status < 500) throw unverifiable;
    throw error;
  }
  const prNumber = Number(body.pr.number);
  const sha = body.pr.sha.toLowerCase();
  const known = getPrRecord(queue.state, prNumber);
  if (known !== undefined && !OVER.has(known.state) && known.headSha.toLowerCase() !== sha) {
    throw refused(
      runId,
      `pull request #${prNumber} is in the queue at head ${known.headSha}, not at ${body.pr.sha} (pr.sha); upload from a run at the PR's current head`,
    );
  }
  const forgeRepo: ForgeRepo = { id: queue.repoId, host: repo.host, owner: repo.owner, name: repo.name };
  const ask = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      if (error instanceof AppError && error.status < 500) throw unverifiable;
      log.warn(
        { err: error, runId, repo: fullName },
        `verifying a fork's run: asking GitHub about ${what} failed`,
      );
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `GitHub could not be asked about ${what} of ${fullName}; retry the job (the server's GitHub credential needs the Actions: read permission)`,
      );
    }
  };
  if (forge.workflowRun === undefined) throw unverifiable;
  const run = await ask(`Actions run ${runId}`, () => forge.workflowRun!(forgeRepo, runId));
  if (run === null) throw refused(runId, `GitHub has no Actions run ${runId} in ${fullName}`);
  const refusal = forkRunRefusal(run, { repositoryFullName: fullName, headSha: sha }, ctx.now());
  if (refusal !== undefined) throw refused(runId, refusal);
  const pr = await ask(`pull request #${prNumber}`, () => forge.pullRequest(forgeRepo, prNumber));
  if (pr === null) throw refused(runId, `GitHub has no pull request #${prNumber} in ${fullName}`);
  if (pr.state !== 'open') throw refused(runId, `pull request #${prNumber} is ${pr.state}`);
  if (pr.headSha.toLowerCase() !== sha) {
    throw refused(
      runId,
      `pull request #${prNumber}'s head on GitHub is ${pr.headSha}, not ${body.pr.sha} (pr.sha): the run is not of this pull request's current head`,
    );
  }
  return caller;
}
