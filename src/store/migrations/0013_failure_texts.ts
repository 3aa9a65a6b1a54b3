import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

/**
 * Failure texts are stored once per distinct text (`failure_texts`, keyed by a hash of the text) and
 * results refer to theirs by `failure_text_hash`. A broken test fails the same way upload after
 * upload, and each failure kept its full text (up to 8,000 characters) in its row: 23 MB per upload
 * of the bench's suite (5% failing with stack traces), and most of the database after a while. The
 * index by hash lets retention delete the texts no result refers to any more.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table failure_texts (hash text primary key, text text not null)`.execute(db);
  await sql`alter table test_results add column failure_text_hash text`.execute(db);
  let after = -1;
  for (;;) {
    const { rows } = await sql<{ id: number; failure_text: string }>`
      select id, failure_text from test_results where failure_text is not null and id > ${after}
      order by id limit 2000`.execute(db);
    if (rows.length === 0) break;
    const hashes = new Map<string, string>();
    for (const r of rows) {
      const hash = failureTextHashV1(r.failure_text);
      hashes.set(hash, r.failure_text);
      await sql`update test_results set failure_text_hash = ${hash} where id = ${r.id}`.execute(db);
    }
    for (const [hash, text] of hashes) {
      await sql`insert into failure_texts (hash, text) values (${hash}, ${text}) on conflict do nothing`.execute(
        db,
      );
    }
    after = Number(rows[rows.length - 1]?.id);
  }
  await sql`alter table test_results drop column failure_text`.execute(db);
  await sql`create index test_results_text on test_results (failure_text_hash)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index test_results_text`.execute(db);
  await sql`alter table test_results add column failure_text text`.execute(db);
  await sql`update test_results set failure_text =
    (select t.text from failure_texts t where t.hash = test_results.failure_text_hash)
    where failure_text_hash is not null`.execute(db);
  await sql`alter table test_results drop column failure_text_hash`.execute(db);
  await sql`drop table failure_texts`.execute(db);
}

/**
 * The key of a failure text as this migration defined it: 128 bits of its SHA-256, base64url. Written
 * out here (a migration imports no live code) so a change to store/uploads/failure-texts.ts cannot change it.
 */
function failureTextHashV1(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}
