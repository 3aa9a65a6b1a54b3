// The schema's migrations as the tests that migrate down and up again name them: derived from
// src/store/migrations/index.ts, so a new migration needs no edit here or in those tests.
import { Migrator, type MigratorProps } from 'kysely/migration';
import { migrations } from '../../src/store/migrations/index.ts';

/** Every migration's name, in the order they apply (kysely applies them sorted by name). */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrations).sort();

/** The names of the migrations after `name`, in the order they apply: what migrating up from it runs. */
export function migrationsAfter(name: string): string[] {
  const at = MIGRATION_NAMES.indexOf(name);
  if (at < 0) throw new Error(`no migration ${name}`);
  return MIGRATION_NAMES.slice(at + 1);
}

/** A kysely Migrator over the schema's migrations, for migrating a test database down (and up). */
export function migratorOf(db: MigratorProps['db']): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => ({ ...migrations }) } });
}
