import path from 'node:path';

/** Everything the server reads from its environment, validated once at start. */
export interface Config {
  /** Interface to listen on (HOST). */
  readonly host: string;
  /** TCP port to listen on (PORT); 0 picks a free port. */
  readonly port: number;
  /** Folder for the embedded SQLite database (MAINLINE_DATA_DIR). */
  readonly dataDir: string;
  /** PostgreSQL connection string (DATABASE_URL); when absent, SQLite under dataDir is used. */
  readonly databaseUrl: string | undefined;
  /** Base URL this server is reached at, for html_url links and upload URLs (MAINLINE_PUBLIC_URL). */
  readonly publicUrl: string;
  /** Organization and token created at start when absent (MAINLINE_BOOTSTRAP_ORG / _TOKEN). */
  readonly bootstrap: { readonly org: string; readonly token: string } | undefined;
  /** Requests per second allowed per API token; 0 turns rate limiting off (MAINLINE_RATE_LIMIT). */
  readonly rateLimitPerSecond: number;
  /** Burst size of the per-token rate limit (MAINLINE_RATE_LIMIT_BURST). */
  readonly rateLimitBurst: number;
  /** Largest accepted request body in bytes (MAINLINE_BODY_LIMIT). */
  readonly bodyLimitBytes: number;
  /** Largest accepted test-report file in bytes, after decompression (MAINLINE_MAX_FILE_BYTES). */
  readonly maxFileBytes: number;
  /** Folder of the plain-git forge's bare repositories (MAINLINE_GIT_ROOT). */
  readonly gitRoot: string;
  /** Milliseconds between merge-queue runner passes (MAINLINE_QUEUE_POLL_MS); 0 turns the runner off. */
  readonly queuePollMs: number;
  /** Seconds between periodic health passes; 0 turns them off (MAINLINE_HEALTH_SWEEP_SECONDS). */
  readonly healthSweepSeconds: number;
  /** pino log level (LOG_LEVEL). */
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Bearer token required by GET /metrics when set (MAINLINE_METRICS_TOKEN). */
  readonly metricsToken: string | undefined;
  /** Seconds to wait for in-flight requests on SIGTERM before exiting anyway (MAINLINE_SHUTDOWN_TIMEOUT). */
  readonly shutdownTimeoutSeconds: number;
}

/** A configuration value that cannot be used; the message says which variable and what to fix. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function readString(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw === undefined || raw === '' ? undefined : raw;
}

function readDatabaseUrl(env: Env): string | undefined {
  const url = readString(env, 'DATABASE_URL');
  if (url !== undefined && !/^postgres(ql)?:\/\//.test(url)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  return url;
}

function readBootstrap(env: Env): Config['bootstrap'] {
  const org = readString(env, 'MAINLINE_BOOTSTRAP_ORG');
  const token = readString(env, 'MAINLINE_BOOTSTRAP_TOKEN');
  if (org === undefined && token === undefined) return undefined;
  if (org === undefined || token === undefined) {
    throw new ConfigError('MAINLINE_BOOTSTRAP_ORG and MAINLINE_BOOTSTRAP_TOKEN must be set together');
  }
  if (!SLUG.test(org)) {
    throw new ConfigError(
      `MAINLINE_BOOTSTRAP_ORG must be a slug (lower-case letters, digits and dashes), got "${org}"`,
    );
  }
  if (token.length < 16) throw new ConfigError('MAINLINE_BOOTSTRAP_TOKEN must be at least 16 characters');
  return { org, token };
}

function readLogLevel(env: Env): Config['logLevel'] {
  const raw = readString(env, 'LOG_LEVEL') ?? 'info';
  const level = LOG_LEVELS.find((l) => l === raw);
  if (level === undefined) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

function readPublicUrl(env: Env, host: string, port: number): string {
  const raw = readString(env, 'MAINLINE_PUBLIC_URL');
  if (raw === undefined) {
    const shown = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
    return `http://${shown}:${port}`;
  }
  if (!/^https?:\/\/[^/]+/.test(raw)) {
    throw new ConfigError('MAINLINE_PUBLIC_URL must be an http:// or https:// URL');
  }
  return raw.replace(/\/+$/, '');
}

/** Reads and validates the configuration. The only place that looks at process.env. */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const host = readString(env, 'HOST') ?? '127.0.0.1';
  const port = readInt(env, 'PORT', 8080, 0, 65535);
  const rateLimitPerSecond = readInt(env, 'MAINLINE_RATE_LIMIT', 100, 0, 1_000_000);
  const dataDir = path.resolve(cwd, readString(env, 'MAINLINE_DATA_DIR') ?? 'data');
  return Object.freeze({
    host,
    port,
    dataDir,
    gitRoot: path.resolve(cwd, readString(env, 'MAINLINE_GIT_ROOT') ?? path.join(dataDir, 'git')),
    queuePollMs: readInt(env, 'MAINLINE_QUEUE_POLL_MS', 1000, 0, 3_600_000),
    databaseUrl: readDatabaseUrl(env),
    publicUrl: readPublicUrl(env, host, port),
    bootstrap: readBootstrap(env),
    rateLimitPerSecond,
    rateLimitBurst: readInt(
      env,
      'MAINLINE_RATE_LIMIT_BURST',
      Math.max(1, rateLimitPerSecond * 2),
      1,
      10_000_000,
    ),
    bodyLimitBytes: readInt(env, 'MAINLINE_BODY_LIMIT', 20 * 1024 * 1024, 1024, 2 ** 31 - 1),
    maxFileBytes: readInt(env, 'MAINLINE_MAX_FILE_BYTES', 100 * 1024 * 1024, 1024, 2 ** 40),
    healthSweepSeconds: readInt(env, 'MAINLINE_HEALTH_SWEEP_SECONDS', 600, 0, 86_400),
    logLevel: readLogLevel(env),
    metricsToken: readString(env, 'MAINLINE_METRICS_TOKEN'),
    shutdownTimeoutSeconds: readInt(env, 'MAINLINE_SHUTDOWN_TIMEOUT', 10, 0, 3600),
  });
}
