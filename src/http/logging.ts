// The server's logger: pino, one access-log line per request, written to stdout off the request path.
import { createRequire } from 'node:module';
import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type pinoModule from 'pino';
import type { Config } from '../config.ts';

// The pino Fastify itself runs (not a dependency of ours): only its asynchronous destination is used.
const requireHere = createRequire(import.meta.url);
const pino = createRequire(requireHere.resolve('fastify'))('pino') as typeof pinoModule;

/**
 * A request is logged once, when answered, at info (method, URL, host, client address, status,
 * milliseconds); the line Fastify writes when it arrives is kept at debug.
 */
class AccessLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) super.requestCompleted(error, request, reply);
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
type Pino = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * A request's logger that makes its pino child (the request id's binding, serialized and redacted
 * by pino) only when something is written at a level the logger writes: at warn and above, most
 * requests log nothing, and making the child was a twentieth of a kept read's CPU time. What it
 * writes is what the child writes.
 */
class LazyChild {
  readonly #parent: Pino;
  readonly #bindings: pinoModule.Bindings;
  readonly #options: pinoModule.ChildLoggerOptions;
  #child: Pino | undefined;

  constructor(parent: Pino, bindings: pinoModule.Bindings, options: pinoModule.ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #made(): Pino {
    this.#child ??= this.#parent.child(this.#bindings, this.#options) as Pino;
    return this.#child;
  }

  /** The child's methods below its level write nothing: nothing to make the child for. */
  #write(level: Level, args: unknown[]): void {
    const child = this.#child ?? (this.#parent.isLevelEnabled(level) ? this.#made() : undefined);
    (child?.[level] as ((...a: unknown[]) => void) | undefined)?.apply(child, args);
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }
  set level(level: string) {
    this.#made().level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.#parent).isLevelEnabled(level);
  }
  child(bindings: pinoModule.Bindings, options?: pinoModule.ChildLoggerOptions): FastifyBaseLogger {
    return this.#made().child(bindings, options);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  silent(): void {}
}

/**
 * Request loggers made on first use (LazyChild), when the level leaves out the access log's info
 * line (at info and below every request writes, so the child is made anyway). A route's own log
 * level (Fastify's logLevel) makes its child at once, as Fastify does.
 */
export const lazyChildren = (
  logger: FastifyBaseLogger,
  bindings: pinoModule.Bindings,
  options: pinoModule.ChildLoggerOptions,
): FastifyBaseLogger =>
  options.level === undefined
    ? (new LazyChild(logger as Pino, bindings, options) as unknown as FastifyBaseLogger)
    : logger.child(bindings, options);

export function loggerOptions(config: Config) {
  if (config.logLevel === 'silent') return { logger: false as const };
  const quiet = config.logLevel === 'warn' || config.logLevel === 'error' || config.logLevel === 'fatal';
  return {
    logController: new AccessLog(),
    ...(quiet ? { childLoggerFactory: lazyChildren } : {}),
    logger: {
      level: config.logLevel,
      // Asynchronous: a request never waits for its log line to be written; pino flushes what is
      // left when the process exits.
      stream: pino.destination({ dest: 1, sync: false }),
      redact: {
        paths: [
          'req.headers["x-api-token"]',
          'req.headers.authorization',
          'req.headers.cookie',
          // Plugins log header objects of their own (e.g. multipart's busboy options).
          '*.headers["x-api-token"]',
          '*.headers.authorization',
          '*.headers.cookie',
        ],
        censor: '[redacted]',
      },
      serializers: {
        // A signed upload URL is a credential for as long as it lives: its signature is never logged.
        req: (req: { method: string; url: string; hostname?: string; ip?: string }) => ({
          method: req.method,
          url: req.url.replace(/([?&]signature=)[^&]*/g, '$1[redacted]'),
          host: req.hostname,
          remoteAddress: req.ip,
        }),
      },
    },
  };
}
