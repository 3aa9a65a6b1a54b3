import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import type { Tables } from '../../src/store/schema.ts';

type Post = (url: string, body: object) => Promise<{ statusCode: number; body: string }>;

/** What a forge scenario does once its forge is wired: the queue of main, with these settings. */
export async function createQueueWith(
  post: Post,
  repo: { host: string; owner: string; name: string },
  settings: Record<string, unknown>,
): Promise<void> {
  const created = await post('/v1/createQueue', { repo, targetBranch: 'main' });
  expect(created.statusCode, created.body).toBe(200);
  if (Object.keys(settings).length === 0) return;
  const updated = await post('/v1/updateQueue', { repo, targetBranch: 'main', ...settings });
  expect(updated.statusCode, updated.body).toBe(200);
}

/**
 * Runs `pass` (a runner pass and whatever delivers the forge's news) until no queue action is left
 * and `busy` says nothing else is waiting; fails the test after 30 passes.
 */
export async function runUntilIdle(
  db: Kysely<Tables>,
  pass: () => Promise<void>,
  busy: () => Promise<boolean> = async () => false,
): Promise<void> {
  for (let i = 0; i < 30; i++) {
    await pass();
    const pending = await db.selectFrom('queue_actions').select('id').where('done_at', 'is', null).execute();
    if (pending.length === 0 && !(await busy())) return;
  }
  throw new Error('the queue did not settle in 30 passes');
}
