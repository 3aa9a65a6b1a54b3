import { type Kysely, sql } from 'kysely';

/**
 * Queue runs and create_test_run actions may be stored without their heads (the commit of each PR
 * merged into the test branch), which the PR entries of the same queue give while the run is live
 * (src/app/queue/row-shape.ts). Up: nothing to change, rows stored whole still load as they are.
 * Down: rows and outbox actions are written whole again, as the versions before this read them; an
 * action whose run has left the state is marked done (the run ended: nothing to build).
 */
export async function up(_db: Kysely<unknown>): Promise<void> {}

export async function down(db: Kysely<unknown>): Promise<void> {
  const queues = await sql<{ id: string }>`select id from merge_queues`.execute(db);
  for (const q of queues.rows) {
    const prs = await sql<{ number: number; data: string }>`
      select number, data from queue_prs where queue_id = ${q.id}`.execute(db);
    const heads = new Map<number, string>();
    for (const p of prs.rows)
      heads.set(Number(p.number), (JSON.parse(p.data) as { headSha: string }).headSha);
    const runs = await sql<{ id: string; data: string }>`
      select id, data from queue_runs where queue_id = ${q.id}`.execute(db);
    const runHeads = new Map<string, Head[]>();
    for (const r of runs.rows) {
      const run = JSON.parse(r.data) as RunLike;
      if (run.prHeads !== undefined) {
        runHeads.set(run.id, run.prHeads);
        continue;
      }
      const whole = {
        ...run,
        prHeads: [...run.dependsOn, ...run.tested].map((n) => headOf(heads, n, run.id)),
      };
      runHeads.set(run.id, whole.prHeads);
      await sql`update queue_runs set data = ${JSON.stringify(whole)} where queue_id = ${q.id} and id = ${r.id}`.execute(
        db,
      );
    }
    const actions = await sql<{ id: number; action: string; created_at: number }>`
      select id, action, created_at from queue_actions where queue_id = ${q.id} and done_at is null`.execute(
      db,
    );
    for (const a of actions.rows) {
      const action = JSON.parse(a.action) as { type: string; runId?: string; prHeads?: Head[] };
      if (action.type !== 'create_test_run' || action.prHeads !== undefined) continue;
      const found = runHeads.get(action.runId ?? '');
      if (found === undefined) {
        await sql`update queue_actions set done_at = ${a.created_at} where id = ${a.id}`.execute(db);
        continue;
      }
      // The key where the versions before this wrote it: after baseSha.
      const whole: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(action)) {
        whole[key] = value;
        if (key === 'baseSha') whole['prHeads'] = found;
      }
      await sql`update queue_actions set action = ${JSON.stringify(whole)} where id = ${a.id}`.execute(db);
    }
  }
}

interface Head {
  number: number;
  sha: string;
}

interface RunLike {
  id: string;
  dependsOn: number[];
  tested: number[];
  prHeads?: Head[];
}

function headOf(heads: ReadonlyMap<number, string>, n: number, runId: string): Head {
  const sha = heads.get(n);
  if (sha === undefined)
    throw new Error(`queue run ${runId} is stored without heads, and PR #${n} has no entry`);
  return { number: n, sha };
}
