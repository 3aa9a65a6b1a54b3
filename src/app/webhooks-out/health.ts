import type { Insertable } from 'kysely';
import type { Queryable } from '../../db/bulk.ts';
import type { StatusTransition } from '../../domain/health/index.ts';
import type { WebhookEvent } from '../../domain/webhooks.ts';
import type { TestCaseEventsTable } from '../../store/schema.ts';
import type { TestCaseRow } from '../../store/tests/cases.ts';
import { type EventRepository, enqueueRepositoryEvents } from './enqueue.ts';

type HistoryEvent = Insertable<TestCaseEventsTable>;

interface QuarantineChange {
  quarantined: boolean;
  setting: string | null;
  reason: string;
  by: string;
}

const lower = (status: string) => status.toLowerCase();

function testOf(row: TestCaseRow) {
  return {
    id: row.id,
    name: row.name,
    parent: row.parent,
    classname: row.classname,
    file: row.file,
    variant: row.variant,
  };
}

function toWebhookEvents(
  rows: readonly TestCaseRow[],
  history: readonly HistoryEvent[],
  repository: EventRepository,
): WebhookEvent[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const statusOf = new Map<string, string>();
  for (const e of history) {
    if (e.kind === 'status') statusOf.set(e.test_case_id, (JSON.parse(e.data) as StatusTransition).to);
  }
  const quarantinedNow = new Map<string, boolean>();
  for (const e of history) {
    if (e.kind === 'quarantine')
      quarantinedNow.set(e.test_case_id, (JSON.parse(e.data) as QuarantineChange).quarantined);
  }
  const out: WebhookEvent[] = [];
  for (const e of history) {
    const row = byId.get(e.test_case_id);
    if (row === undefined) continue;
    const repo = { host: repository.host, owner: repository.owner, name: repository.name };
    if (e.kind === 'status') {
      const t = JSON.parse(e.data) as StatusTransition;
      out.push({
        type: 'test.status_changed',
        data: {
          test: testOf(row),
          repository: repo,
          previous_status: lower(t.from),
          status: lower(t.to),
          reason: t.reason,
          changed_at: new Date(t.at).toISOString(),
          quarantined: quarantinedNow.get(row.id) ?? row.quarantined === 1,
        },
      });
    } else if (e.kind === 'quarantine') {
      const q = JSON.parse(e.data) as QuarantineChange;
      out.push({
        type: 'test.quarantined',
        data: {
          test: testOf(row),
          repository: repo,
          quarantined: q.quarantined,
          setting: q.setting,
          reason: q.reason,
          changed_by: q.by,
          status: lower(statusOf.get(row.id) ?? row.status),
          changed_at: new Date(e.at).toISOString(),
        },
      });
    }
  }
  return out;
}

/**
 * Enqueues test.status_changed and test.quarantined for the history a recompute wrote (its rows are
 * the tests as they were before it). No query when nothing changed; one when the organization has no
 * endpoint, however many tests changed.
 */
export async function enqueueHealthEvents(
  trx: Queryable,
  repoId: string,
  rows: readonly TestCaseRow[],
  history: readonly HistoryEvent[],
  now: number,
): Promise<void> {
  if (!history.some((e) => e.kind === 'status' || e.kind === 'quarantine')) return;
  await enqueueRepositoryEvents(trx, repoId, (repository) => toWebhookEvents(rows, history, repository), now);
}
