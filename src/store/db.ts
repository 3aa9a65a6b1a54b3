import type { Kysely, Transaction } from 'kysely';
import type { Tables } from './schema.ts';

/** Anything queries can run on: the database itself or an open transaction. */
export type Queryable = Kysely<Tables> | Transaction<Tables>;
