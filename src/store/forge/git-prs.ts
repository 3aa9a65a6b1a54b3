import type { Selectable } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import type { CommitStatusesTable, GitPullRequestsTable } from '../schema.ts';

export type GitPullRequestRow = Selectable<GitPullRequestsTable>;
export type CommitStatusRow = Selectable<CommitStatusesTable>;

export async function upsertPullRequest(db: Queryable, row: GitPullRequestRow): Promise<void> {
  const { repo_id: _r, number: _n, created_at: _c, ...update } = row;
  await db
    .insertInto('git_pull_requests')
    .values(row)
    .onConflict((oc) => oc.columns(['repo_id', 'number']).doUpdateSet(update))
    .execute();
}

export function findPullRequest(
  db: Queryable,
  repoId: string,
  number: number,
): Promise<GitPullRequestRow | undefined> {
  return db
    .selectFrom('git_pull_requests')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('number', '=', number)
    .executeTakeFirst();
}

export async function setPullRequestState(
  db: Queryable,
  repoId: string,
  number: number,
  state: string,
  at: number,
): Promise<void> {
  await db
    .updateTable('git_pull_requests')
    .set({ state, updated_at: at })
    .where('repo_id', '=', repoId)
    .where('number', '=', number)
    .execute();
}

export async function upsertCommitStatus(db: Queryable, row: CommitStatusRow): Promise<void> {
  const { repo_id: _r, sha: _s, context: _c, ...update } = row;
  await db
    .insertInto('commit_statuses')
    .values(row)
    .onConflict((oc) => oc.columns(['repo_id', 'sha', 'context']).doUpdateSet(update))
    .execute();
}

export function commitStatuses(db: Queryable, repoId: string, sha: string): Promise<CommitStatusRow[]> {
  return db
    .selectFrom('commit_statuses')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('sha', '=', sha)
    .orderBy('context')
    .execute();
}
