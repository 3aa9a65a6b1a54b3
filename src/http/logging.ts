// The server's logger: pino, one access-log line per request, written to stdout off the request path.
import { createRequire } from 'node:module';
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
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

export function loggerOptions(config: Config) {
  if (config.logLevel === 'silent') return { logger: false as const };
  return {
    logController: new AccessLog(),
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
