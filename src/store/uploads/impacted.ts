import type { Queryable } from '../../db/bulk.ts';
import type { ImpactedTargetsTable } from '../schema.ts';

export async function saveImpactedTargets(db: Queryable, row: ImpactedTargetsTable): Promise<void> {
  await db
    .insertInto('impacted_targets')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['repo_id', 'pr_number', 'head_sha'])
        .doUpdateSet({ targets: row.targets, updated_at: row.updated_at }),
    )
    .execute();
}

export function findImpactedTargets(
  db: Queryable,
  repoId: string,
  prNumber: number,
  headSha: string,
): Promise<ImpactedTargetsTable | undefined> {
  return db
    .selectFrom('impacted_targets')
    .selectAll()
    .where('repo_id', '=', repoId)
    .where('pr_number', '=', prNumber)
    .where('head_sha', '=', headSha)
    .executeTakeFirst();
}
