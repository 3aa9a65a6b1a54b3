import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { AppContext } from '../app/context.ts';
import type { IngestGate } from '../app/ingest/gate.ts';
import type { ParseJunit } from '../app/ingest/parsing/pool.ts';
import type { PageTokens } from '../app/page-token.ts';
import type { Forge } from '../app/ports.ts';
import type { UrlSigner } from '../app/url-signer.ts';
import type { Database } from '../db/database.ts';

/** The Fastify instance routes are registered on, typed by the TypeBox provider. */
export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** What route modules are given. */
export interface RouteDeps {
  readonly ctx: AppContext;
  readonly database: Database;
  readonly pageTokens: PageTokens;
  /** Signs the URLs handed out for unauthenticated use (bundle uploads). */
  readonly urlSigner: UrlSigner;
  /** Parses one uploaded JUnit file (on a parser thread unless MAINLINE_PARSE_THREADS is 0). */
  readonly parseJunit: ParseJunit;
  /** Turns for uploads: at most MAINLINE_INGEST_CONCURRENCY are ingested at once. */
  readonly ingestGate: IngestGate;
  /** Where the merge queue acts: the plain-git forge today. */
  readonly forge: Forge;
  /** False while the server is shutting down: readiness answers 503. */
  readonly isAccepting: () => boolean;
}
