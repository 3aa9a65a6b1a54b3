import { type Kysely, sql } from 'kysely';

/**
 * Forge grants: which organization may act on which forge account (a GitHub user or organization,
 * "owner") on a forge host. An owner on a host belongs to at most one organization, so a webhook
 * about it reaches exactly one. With a GitHub App the grant records the installation it came from
 * (unique too): deliveries are routed by installation id. No grant is created for existing
 * repositories: the operator grants each owner once after upgrading (docs/github.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('forge_grants')
    .addColumn('host_key', 'text', (c) => c.notNull())
    .addColumn('owner_key', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('installation_id', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('forge_grants_pk', ['host_key', 'owner_key'])
    .execute();
  await sql`create unique index forge_grants_installation on forge_grants (installation_id)`.execute(db);
  await sql`create index forge_grants_org on forge_grants (org_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('forge_grants').execute();
}
