// Request loggers at LOG_LEVEL warn and above are made on first use (http/logging.ts lazyChildren):
// a request that writes nothing costs no pino child, and what one writes is byte for byte what
// Fastify's own child (logger.child(bindings, options)) writes.
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type pinoModule from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { lazyChildren, loggerOptions } from '../../src/http/logging.ts';

const requireHere = createRequire(import.meta.url);
const pino = createRequire(requireHere.resolve('fastify'))('pino') as typeof pinoModule;

/** A warn-level pino writing synchronously into `lines`, redacting as the server's does. */
function logger(lines: string[]) {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return pino(
    {
      level: 'warn',
      timestamp: false,
      redact: { paths: ['req.headers["x-api-token"]'], censor: '[redacted]' },
    },
    stream,
  );
}

const BOOM = new Error('boom');

/** What a request's logger goes through: each level, an error, a child of it. */
function use(log: FastifyBaseLogger) {
  log.debug({ req: { url: '/v1/x' } }, 'incoming request');
  log.info({ res: { statusCode: 200 } }, 'request completed');
  log.warn({ req: { headers: { 'x-api-token': 'ml_secret' } } }, 'slow client');
  log.error(BOOM, 'failed');
  log.child({ part: 'inner' }).warn('from a child');
  log.fatal('%s is down', 'db');
}

describe('lazy request loggers', () => {
  it('makes no child for a request that writes nothing at its level', () => {
    const parent = logger([]);
    const child = vi.spyOn(parent, 'child');
    const log = lazyChildren(parent, { reqId: 'r-1' }, {});
    log.debug('dropped');
    log.info('dropped too');
    expect(log.level).toBe('warn');
    expect(child).not.toHaveBeenCalled();
    log.warn('written');
    log.error('written too');
    expect(child).toHaveBeenCalledTimes(1);
  });

  it("writes exactly what Fastify's child logger writes", () => {
    const eager: string[] = [];
    const lazy: string[] = [];
    use(logger(eager).child({ reqId: 'r-2' }, {}) as FastifyBaseLogger);
    use(lazyChildren(logger(lazy), { reqId: 'r-2' }, {}));
    expect(eager).toHaveLength(4);
    expect(eager.join('')).toContain('"reqId":"r-2"');
    expect(eager.join('')).toContain('[redacted]');
    expect(lazy).toEqual(eager);
  });

  it("makes a route's own log level's child at once", () => {
    const parent = logger([]);
    const child = vi.spyOn(parent, 'child');
    const log = lazyChildren(parent, { reqId: 'r-3' }, { level: 'debug' });
    expect(child).toHaveBeenCalledTimes(1);
    expect(log.level).toBe('debug');
  });

  it('is what the server uses where the level leaves out the access log, and only there', () => {
    const factory = (level: string) =>
      (loggerOptions(loadConfig({ LOG_LEVEL: level })) as { childLoggerFactory?: unknown })
        .childLoggerFactory;
    for (const level of ['warn', 'error', 'fatal']) expect(factory(level)).toBe(lazyChildren);
    for (const level of ['info', 'debug', 'trace', 'silent']) expect(factory(level)).toBeUndefined();
  });
});
