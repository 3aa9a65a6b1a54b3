import type { Queryable } from './db.ts';

/** Sets a test's ticket. */
export async function setTicket(db: Queryable, id: string, ticketId: string, url: string): Promise<void> {
  await db
    .updateTable('test_cases')
    .set({ ticket_id: ticketId, ticket_url: url })
    .where('id', '=', id)
    .execute();
}

/** Sets a test's quarantine override. */
export async function setQuarantineOverride(db: Queryable, id: string, override: string): Promise<void> {
  await db.updateTable('test_cases').set({ quarantine_override: override }).where('id', '=', id).execute();
}

/** Sets a test's manual flag (JSON); a recompute follows and updates status and has_active_monitor. */
export async function setManualFlag(db: Queryable, id: string, flag: string): Promise<void> {
  await db.updateTable('test_cases').set({ manual_flag: flag }).where('id', '=', id).execute();
}
