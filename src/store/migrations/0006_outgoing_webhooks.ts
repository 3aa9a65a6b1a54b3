import { type Kysely, sql } from 'kysely';

/**
 * Outgoing webhooks: the endpoints an organization configured, and an outbox of deliveries written in
 * the same transaction as the change they report (so a crash loses none) and sent by the dispatcher.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('disabled_at', 'bigint')
    .execute();
  await sql`create index webhook_endpoints_org on webhook_endpoints (org_id, created_at)`.execute(db);

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) =>
      c.notNull().references('webhook_endpoints.id').onDelete('cascade'),
    )
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .execute();
  // The dispatcher's query: pending deliveries by due time. Partial, so finished ones cost nothing.
  await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where delivered_at is null and failed_at is null`.execute(
    db,
  );
  // An endpoint's recent deliveries (POST /v1/webhooks/deliveries), and the cascade on delete.
  await sql`create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, created_at)`.execute(
    db,
  );
  // Pruning finished deliveries past their retention.
  await sql`create index webhook_deliveries_created on webhook_deliveries (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}
