// A test's manual settings, written under the repository's health lock with a health_version bump
// (repos.ts writeTestHealth), as every write to test_cases is.
import type { Queryable } from '../../db/bulk.ts';
import { writeTestHealth } from '../tenancy/repos.ts';

/** Sets one column group of the repository's test `id`. */
function setColumns(
  db: Queryable,
  repoId: string,
  id: string,
  values:
    | { ticket_id: string; ticket_url: string }
    | { quarantine_override: string }
    | { manual_flag: string },
): Promise<void> {
  return writeTestHealth(db, repoId, async () => {
    const row = await db
      .updateTable('test_cases')
      .set(values)
      .where('repo_id', '=', repoId)
      .where('id', '=', id)
      .executeTakeFirst();
    return { changed: Number(row.numUpdatedRows) > 0, value: undefined };
  });
}

/** Sets a test's ticket. */
export function setTicket(
  db: Queryable,
  repoId: string,
  id: string,
  ticketId: string,
  url: string,
): Promise<void> {
  return setColumns(db, repoId, id, { ticket_id: ticketId, ticket_url: url });
}

/** Sets a test's quarantine override. */
export function setQuarantineOverride(
  db: Queryable,
  repoId: string,
  id: string,
  override: string,
): Promise<void> {
  return setColumns(db, repoId, id, { quarantine_override: override });
}

/** Sets a test's manual flag (JSON); a recompute follows and updates status and has_active_monitor. */
export function setManualFlag(db: Queryable, repoId: string, id: string, flag: string): Promise<void> {
  return setColumns(db, repoId, id, { manual_flag: flag });
}
