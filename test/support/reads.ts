// Named reads of what the server stored, for tests that check a row the API does not show (an id to
// pass back, a token kept only as a hash, a claim on a bundle URL). A test reads through these instead
// of writing queries, so a change of a table touches this file and the tests that are about storage.
import type { Kysely, Selectable } from 'kysely';
import type { Tables } from '../../src/store/schema.ts';
import type { TestApp } from './app.ts';

/** A test app (its database) or a database handle. */
export type Stored = Kysely<Tables> | Pick<TestApp, 'db'>;

/** A repository by owner and name (hosts are not compared: tests use one per owner/name). */
export interface RepoName {
  readonly owner: string;
  readonly name: string;
}

const dbOf = (s: Stored): Kysely<Tables> => ('db' in s ? s.db.database.db : s);

/** The id of the test named `name` (in `repo` when given); throws when there is none. */
export async function storedTestId(s: Stored, name: string, repo?: RepoName): Promise<string> {
  let query = dbOf(s)
    .selectFrom('test_cases')
    .innerJoin('repositories', 'repositories.id', 'test_cases.repo_id')
    .select('test_cases.id')
    .where('test_cases.name', '=', name);
  if (repo !== undefined)
    query = query.where('repositories.owner', '=', repo.owner).where('repositories.name', '=', repo.name);
  const row = await query.executeTakeFirst();
  if (row === undefined) throw new Error(`no stored test named ${name}`);
  return row.id;
}

/** Every stored test's id by its name. */
export async function storedTestIds(s: Stored): Promise<Map<string, string>> {
  const rows = await dbOf(s).selectFrom('test_cases').select(['id', 'name']).execute();
  return new Map(rows.map((r) => [r.name, r.id]));
}

/** The names of every stored test, sorted. */
export async function storedTestNames(s: Stored): Promise<string[]> {
  const rows = await dbOf(s).selectFrom('test_cases').select('name').orderBy('name').execute();
  return rows.map((r) => r.name);
}

/** A repository's tests, in ordinal order. */
export async function storedTestsOf(s: Stored, repo: RepoName): Promise<Selectable<Tables['test_cases']>[]> {
  return dbOf(s)
    .selectFrom('test_cases')
    .innerJoin('repositories', 'repositories.id', 'test_cases.repo_id')
    .selectAll('test_cases')
    .where('repositories.owner', '=', repo.owner)
    .where('repositories.name', '=', repo.name)
    .orderBy('test_cases.ordinal')
    .execute();
}

/** The stored repository `repo`; throws when there is none. */
export async function repositoryRow(s: Stored, repo: RepoName): Promise<Selectable<Tables['repositories']>> {
  return dbOf(s)
    .selectFrom('repositories')
    .selectAll()
    .where('owner', '=', repo.owner)
    .where('name', '=', repo.name)
    .executeTakeFirstOrThrow();
}

/** The failed and skipped attempts stored for an upload (passes are kept per upload, not as rows). */
export async function storedResultsOf(
  s: Stored,
  uploadId: string,
): Promise<Selectable<Tables['test_results']>[]> {
  return dbOf(s).selectFrom('test_results').selectAll().where('upload_id', '=', uploadId).execute();
}

/** Every stored upload, oldest first. */
export async function uploadRows(s: Stored): Promise<Selectable<Tables['uploads']>[]> {
  return dbOf(s).selectFrom('uploads').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** How many uploads are stored. */
export async function uploadCount(s: Stored): Promise<number> {
  return (await dbOf(s).selectFrom('uploads').select('id').execute()).length;
}

/** The upload of commit `sha`; throws when there is none. */
export async function uploadOf(s: Stored, sha: string): Promise<Selectable<Tables['uploads']>> {
  return dbOf(s).selectFrom('uploads').selectAll().where('commit_sha', '=', sha).executeTakeFirstOrThrow();
}

/** Whether the signed bundle URL `id` has been claimed by a PUT. */
export async function bundleClaimed(s: Stored, id: string): Promise<boolean> {
  const row = await dbOf(s)
    .selectFrom('bundle_uploads')
    .select('consumed_at')
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.consumed_at != null;
}

/** Every stored API token row (the token itself is never among the columns). */
export async function apiTokenRows(s: Stored): Promise<Selectable<Tables['api_tokens']>[]> {
  return dbOf(s).selectFrom('api_tokens').selectAll().execute();
}

/** The id of the stored row of API token `token`, found by its prefix; throws when there is none. */
export async function apiTokenId(s: Stored, token: string): Promise<string> {
  const row = (await apiTokenRows(s)).find((r) => token.startsWith(r.token_prefix));
  if (row === undefined) throw new Error('no stored row for that token');
  return row.id;
}

/** The impacted targets stored per PR, by PR number. */
export async function impactedTargetRows(
  s: Stored,
): Promise<Pick<Selectable<Tables['impacted_targets']>, 'pr_number' | 'head_sha' | 'targets'>[]> {
  return dbOf(s)
    .selectFrom('impacted_targets')
    .select(['pr_number', 'head_sha', 'targets'])
    .orderBy('pr_number')
    .execute();
}

/** The id of the merge queue of organization `orgSlug`, or of the only queue when it is left out. */
export async function queueId(s: Stored, orgSlug?: string): Promise<string> {
  let query = dbOf(s)
    .selectFrom('merge_queues')
    .innerJoin('repositories', 'repositories.id', 'merge_queues.repo_id')
    .innerJoin('organizations', 'organizations.id', 'repositories.org_id')
    .select('merge_queues.id');
  if (orgSlug !== undefined) query = query.where('organizations.slug', '=', orgSlug);
  return (await query.executeTakeFirstOrThrow()).id;
}

/** A stored queue action: its kind and the fields tests look at. */
export type StoredQueueAction = { type: string; prNumber?: number; expectedTargetSha?: string };

/** The queue actions not carried out yet, oldest first (of queue `id` when given). */
export async function pendingQueueActions(s: Stored, id?: string): Promise<StoredQueueAction[]> {
  let query = dbOf(s).selectFrom('queue_actions').select('action').where('done_at', 'is', null);
  if (id !== undefined) query = query.where('queue_id', '=', id);
  const rows = await query.orderBy('id').execute();
  return rows.map((r) => JSON.parse(r.action) as StoredQueueAction);
}

/** The GitHub (and GitLab) webhook deliveries recorded. */
export async function forgeDeliveryRows(s: Stored): Promise<Selectable<Tables['github_deliveries']>[]> {
  return dbOf(s).selectFrom('github_deliveries').selectAll().execute();
}

/** Every distinct failure text stored, sorted. */
export async function storedFailureTexts(s: Stored): Promise<string[]> {
  const rows = await dbOf(s).selectFrom('failure_texts').select('text').orderBy('text').execute();
  return rows.map((r) => r.text);
}

/** Every outgoing webhook delivery stored, of every endpoint. */
export async function webhookDeliveryRows(s: Stored): Promise<Selectable<Tables['webhook_deliveries']>[]> {
  return dbOf(s).selectFrom('webhook_deliveries').selectAll().execute();
}

/** The stored version of merge queue `id`, or of the only queue when it is left out. */
export async function queueVersion(s: Stored, id?: string): Promise<number> {
  let query = dbOf(s).selectFrom('merge_queues').select('version');
  if (id !== undefined) query = query.where('id', '=', id);
  return Number((await query.executeTakeFirstOrThrow()).version);
}

/** Who holds the lease of merge queue `id` (of the only queue when it is left out), if anyone. */
export async function queueLeaseOwner(s: Stored, id?: string): Promise<string | null> {
  let query = dbOf(s).selectFrom('merge_queues').select('lease_owner');
  if (id !== undefined) query = query.where('id', '=', id);
  return (await query.executeTakeFirstOrThrow()).lease_owner;
}

/** The PR entry rows of every queue (number and stored JSON), by number. */
export async function queuePrRows(s: Stored): Promise<{ number: number; data: string }[]> {
  const rows = await dbOf(s).selectFrom('queue_prs').select(['number', 'data']).orderBy('number').execute();
  return rows.map((r) => ({ number: Number(r.number), data: r.data }));
}

/** Every stored queue test run, as its JSON holds it (the fields tests look at). */
export async function storedQueueRuns(
  s: Stored,
): Promise<{ id: string; tested: number[]; dependsOn: number[] }[]> {
  const rows = await dbOf(s).selectFrom('queue_runs').select('data').execute();
  return rows.map((r) => JSON.parse(r.data) as { id: string; tested: number[]; dependsOn: number[] });
}

/** The finished PRs and runs moved to the queue archive: their kind and PR number. */
export async function queueArchiveRows(s: Stored): Promise<{ kind: string; pr_number: number | null }[]> {
  return dbOf(s).selectFrom('queue_archive').select(['kind', 'pr_number']).execute();
}

/** How many days of per-repository dashboard figures are kept. */
export async function dashboardRepoDayCount(s: Stored): Promise<number> {
  return (await dbOf(s).selectFrom('dashboard_repo_days').selectAll().execute()).length;
}

/** The last errors of the queue actions that failed at least once, oldest action first. */
export async function failedQueueActionErrors(s: Stored): Promise<(string | null)[]> {
  const rows = await dbOf(s)
    .selectFrom('queue_actions')
    .select('last_error')
    .where('attempts', '>', 0)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.last_error);
}
