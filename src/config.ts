// Over ~350 lines: each setting's documented field and its reader and checks stay in the one module that reads process.env.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';

/** Everything the server reads from its environment, validated once at start. */
export interface Config {
  /** Interface to listen on (HOST). */
  readonly host: string;
  /** TCP port to listen on (PORT); 0 picks a free port. */
  readonly port: number;
  /**
   * Folder for the embedded SQLite database and, on either engine, the temporary files of request
   * bodies being received (`tmp/`, see uploadTempDir) (MAINLINE_DATA_DIR).
   */
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
  /**
   * Failed authentications and dashboard sign-ins allowed per client address per minute, before any
   * token is accepted; 0 turns the limit off (MAINLINE_AUTH_FAIL_LIMIT).
   */
  readonly authFailLimitPerMinute: number;
  /** Parsed merge-queue states kept in memory by (queue, version) for getQueue; 0 keeps none (MAINLINE_QUEUE_STATE_CACHE). */
  readonly queueStateCache: number;
  /** Queues whose serialized getQueue answer is kept, by version and settings; 0 keeps none (MAINLINE_KEPT_QUEUES). */
  readonly keptQueues: number;
  /** GitHub and GitLab branches whose queue settings (.mainline.yaml, protection) getQueue remembers; 0 none (MAINLINE_FORGE_SETTINGS_CACHE). */
  readonly forgeSettingsCache: number;
  /** Seconds such a memo may be used at most (webhooks drop it sooner) (MAINLINE_FORGE_SETTINGS_TTL). */
  readonly forgeSettingsTtlSeconds: number;
  /** Burst size of that limit (MAINLINE_AUTH_FAIL_BURST). */
  readonly authFailBurst: number;
  /** Client addresses that limit remembers at once, least recently seen dropped first (MAINLINE_AUTH_FAIL_ADDRESSES). */
  readonly authFailAddresses: number;
  /**
   * Proxies whose X-Forwarded-For names the client (MAINLINE_TRUST_PROXY: addresses, CIDR ranges or
   * loopback/linklocal/uniquelocal); empty: the client is the socket's peer.
   */
  readonly trustProxy: readonly string[];
  /** Largest accepted request body in bytes (MAINLINE_BODY_LIMIT). */
  readonly bodyLimitBytes: number;
  /** Largest accepted test-report file in bytes, after decompression (MAINLINE_MAX_FILE_BYTES). */
  readonly maxFileBytes: number;
  /**
   * Largest multipart upload in bytes: its body as sent, and its files' total after decompression
   * (MAINLINE_UPLOAD_LIMIT).
   */
  readonly uploadLimitBytes: number;
  /** Seconds an upload's body may stop arriving before it is cut with 408 (MAINLINE_BODY_STALL_SECONDS). */
  readonly bodyStallSeconds: number;
  /** Test attempts one upload's files may hold together (MAINLINE_MAX_UPLOAD_ATTEMPTS). */
  readonly maxUploadAttempts: number;
  /** Days an upload's results are kept; 0 keeps them forever (MAINLINE_RETENTION_DAYS). */
  readonly retentionDays: number;
  /** Threads that parse uploaded JUnit files; 0 parses on the request thread (MAINLINE_PARSE_THREADS). */
  readonly parseThreads: number;
  /** Uploads ingested at once; later ones wait for a turn (MAINLINE_INGEST_CONCURRENCY). */
  readonly ingestConcurrency: number;
  /** Folder of the plain-git forge's bare repositories (MAINLINE_GIT_ROOT). */
  readonly gitRoot: string;
  /** Milliseconds between merge-queue runner passes (MAINLINE_QUEUE_POLL_MS); 0 turns the runner off. */
  readonly queuePollMs: number;
  /** Seconds between periodic health passes; 0 turns them off (MAINLINE_HEALTH_SWEEP_SECONDS). */
  readonly healthSweepSeconds: number;
  /**
   * Milliseconds after a repository's last upload that the counts and durations its uploads left
   * listed are folded into the rollups (MAINLINE_FOLD_IDLE_MS); 0 leaves them to the periodic pass and
   * the next read.
   */
  readonly foldIdleMs: number;
  /** pino log level (LOG_LEVEL). */
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Bearer token required by GET /metrics when set (MAINLINE_METRICS_TOKEN). */
  readonly metricsToken: string | undefined;
  /**
   * Merge queues given labels of their own on /metrics (when MAINLINE_METRICS_TOKEN is set); the rest
   * are added up as _other (MAINLINE_METRICS_MAX_QUEUES).
   */
  readonly metricsMaxQueues: number;
  /** Seconds to wait for in-flight requests on SIGTERM before exiting anyway (MAINLINE_SHUTDOWN_TIMEOUT). */
  readonly shutdownTimeoutSeconds: number;
  /** Seconds a client has to send a whole request before it is cut off (MAINLINE_REQUEST_TIMEOUT). */
  readonly requestTimeoutSeconds: number;
  /** Milliseconds between outgoing-webhook dispatcher passes (MAINLINE_WEBHOOK_POLL_MS); 0 turns it off. */
  readonly webhookPollMs: number;
  /** Milliseconds a webhook receiver has to answer (MAINLINE_WEBHOOK_TIMEOUT_MS). */
  readonly webhookTimeoutMs: number;
  /**
   * Whether outgoing webhooks may target private and loopback addresses (MAINLINE_WEBHOOK_ALLOW_PRIVATE).
   * Link-local and cloud metadata addresses are refused whatever this says.
   */
  readonly webhookAllowPrivate: boolean;
  /**
   * Quarantined test ids each process keeps in memory for getQuarantineConfig, all repositories
   * together (MAINLINE_QUARANTINE_INDEX_IDS); a repository with more is read from the database.
   */
  readonly quarantineIndexIds: number;
  /** Authenticated API tokens each process remembers; 0 looks every token up (MAINLINE_TOKEN_CACHE). */
  readonly tokenCacheSize: number;
  /**
   * Seconds a remembered token is trusted before it is looked up again: how long a token revoked by
   * another process (the CLI, another replica) may still work here (MAINLINE_TOKEN_CACHE_SECONDS).
   */
  readonly tokenCacheSeconds: number;
  /** Repositories (by organization and name) each process remembers; 0 none (MAINLINE_REPOSITORY_CACHE). */
  readonly repositoryCacheSize: number;
  /** Serialized answers kept per page-listing read route, up to ~130 KB each (MAINLINE_KEPT_PAGES). */
  readonly keptPages: number;
  /** Serialized single-test answers (get-test-details) kept, a few KB each (MAINLINE_KEPT_DETAILS). */
  readonly keptDetails: number;
  /** Bytes of large getQuarantineConfig bodies kept parsed, all together; 0 none (MAINLINE_KEPT_BODY_CHARS). */
  readonly keptBodyChars: number;
  /** Pages of list-unhealthy-tests records kept by health version, 100 records each, and as many of the dashboard's all-tests list (MAINLINE_PAGE_CACHE). */
  readonly pageCacheSize: number;
  /** Entries of the dashboard's failing-tests lists kept by read version, all lists together (MAINLINE_KEPT_FAILING_TESTS). */
  readonly keptFailingTests: number;
  /** Tests whose name, classname and file the all-tests search keeps, all repositories together (MAINLINE_KEPT_TEST_TEXTS). */
  readonly keptTestTexts: number;
  /** Bytes of decoded upload pass blobs each process keeps (MAINLINE_PASS_CACHE_BYTES). */
  readonly passCacheBytes: number;
  /** Merge bases of commit pairs the git forge remembers; 0 none (MAINLINE_MERGE_BASE_CACHE). */
  readonly mergeBaseCache: number;
  /** Branches the plain-git forge remembers: names git accepted, `.mainline.yaml` at the head; 0 none (MAINLINE_GIT_BRANCH_CACHE). */
  readonly gitBranchCache: number;
  /** Tests (their seen columns) ingestion remembers between uploads, all repositories together (MAINLINE_SEEN_TESTS_CACHE). */
  readonly seenTestsCache: number;
  /** Test ids ingestion remembers by their identity fields (MAINLINE_TEST_ID_CACHE). */
  readonly testIdCache: number;
  /** Tests whose last failure's facts ingestion remembers (MAINLINE_FAILURE_CACHE); texts: a fifth as many. */
  readonly failureCache: number;
  /** The GitHub forge (MAINLINE_GITHUB_*); absent: every repository uses the plain-git forge. */
  readonly github: GitHubConfig | undefined;
  /** The GitLab forge (MAINLINE_GITLAB_*); absent: no repository goes to GitLab. */
  readonly gitlab: GitLabConfig | undefined;
}

export interface GitLabConfig {
  /** The instance (MAINLINE_GITLAB_URL, default https://gitlab.com); the API is under /api/v4. */
  readonly url: string;
  /** Repositories with this host go to GitLab (MAINLINE_GITLAB_HOST; default the URL's host). */
  readonly host: string;
  /** A personal, group or project access token with api and write_repository (MAINLINE_GITLAB_TOKEN). */
  readonly token: string;
  /** The secret token GitLab sends in X-Gitlab-Token (MAINLINE_GITLAB_WEBHOOK_SECRET); without it webhooks are refused. */
  readonly webhookSecret: string | undefined;
  /**
   * Test branches pushed with ci.skip and their pipelines created through the API
   * (MAINLINE_GITLAB_CREATE_PIPELINES): true for every project, or the paths of the projects that need
   * it, lower-cased (GitLab's paths are case-insensitive); false for none.
   */
  readonly createPipelines: boolean | readonly string[];
}

export interface GitHubConfig {
  /** REST API base URL (MAINLINE_GITHUB_API_URL): https://api.github.com, or https://HOST/api/v3 for Enterprise. */
  readonly apiUrl: string;
  /** Repositories with this host go through GitHub (MAINLINE_GITHUB_HOST; default github.com, or the Enterprise host). */
  readonly host: string;
  /** A GitHub App (MAINLINE_GITHUB_APP_ID + MAINLINE_GITHUB_PRIVATE_KEY[_FILE]) or a token (MAINLINE_GITHUB_TOKEN). */
  readonly auth:
    | { readonly kind: 'app'; readonly appId: number; readonly privateKey: string }
    | { readonly kind: 'token'; readonly token: string };
  /** Secret GitHub signs webhook deliveries with (MAINLINE_GITHUB_WEBHOOK_SECRET); without it /webhooks/github refuses all. */
  readonly webhookSecret: string | undefined;
}

/** Where bodies being received spill past their in-memory part (src/lib/spool.ts): `<dataDir>/tmp`. */
export function uploadTempDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'tmp');
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

/** The failure reads look back 30 days: a shorter retention would make them wrong, not smaller. */
const MIN_RETENTION_DAYS = 30;

function readRetentionDays(env: Env): number {
  const days = readInt(env, 'MAINLINE_RETENTION_DAYS', 90, 0, 36_500);
  if (days !== 0 && days < MIN_RETENTION_DAYS)
    throw new ConfigError(
      `MAINLINE_RETENTION_DAYS must be 0 (keep results forever) or at least ${MIN_RETENTION_DAYS} (failure groups look back ${MIN_RETENTION_DAYS} days), got "${days}"`,
    );
  return days;
}

function readFlag(env: Env, name: string): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(`${name} must be 1 (or true) to turn it on, or 0 (or false), got "${env[name]}"`);
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** MAINLINE_TRUST_PROXY: each entry an IP address, a CIDR range or one of proxy-addr's names. */
function readTrustProxy(env: Env): readonly string[] {
  const raw = readString(env, 'MAINLINE_TRUST_PROXY');
  if (raw === undefined) return [];
  const entries = raw.split(',').map((e) => e.trim());
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 6 ? 128 : 32;
    const valid =
      PROXY_NAMES.includes(entry) ||
      (family !== 0 &&
        extra === undefined &&
        (prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits)));
    if (!valid) {
      throw new ConfigError(
        `MAINLINE_TRUST_PROXY must list proxy addresses or CIDR ranges separated by commas (e.g. 10.0.0.0/8,127.0.0.1) or loopback, linklocal, uniquelocal; "${entry}" is none of these`,
      );
    }
  }
  return entries;
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

function readGitHub(env: Env, cwd: string): GitHubConfig | undefined {
  const token = readString(env, 'MAINLINE_GITHUB_TOKEN');
  const appId = readString(env, 'MAINLINE_GITHUB_APP_ID');
  let privateKey = readString(env, 'MAINLINE_GITHUB_PRIVATE_KEY');
  const keyFile = readString(env, 'MAINLINE_GITHUB_PRIVATE_KEY_FILE');
  const webhookSecret = readString(env, 'MAINLINE_GITHUB_WEBHOOK_SECRET');
  const apiUrlRaw = readString(env, 'MAINLINE_GITHUB_API_URL');
  if ([token, appId, privateKey, keyFile, webhookSecret, apiUrlRaw].every((v) => v === undefined)) {
    return undefined;
  }
  if (keyFile !== undefined) {
    try {
      privateKey = readFileSync(path.resolve(cwd, keyFile), 'utf8');
    } catch (error) {
      throw new ConfigError(`MAINLINE_GITHUB_PRIVATE_KEY_FILE cannot be read: ${(error as Error).message}`);
    }
  }
  let auth: GitHubConfig['auth'];
  if (appId !== undefined || privateKey !== undefined) {
    if (appId === undefined || privateKey === undefined) {
      throw new ConfigError(
        'A GitHub App needs both MAINLINE_GITHUB_APP_ID and MAINLINE_GITHUB_PRIVATE_KEY (or _FILE)',
      );
    }
    if (!/^\d+$/.test(appId))
      throw new ConfigError(`MAINLINE_GITHUB_APP_ID must be a number, got "${appId}"`);
    if (!privateKey.includes('PRIVATE KEY')) {
      throw new ConfigError("MAINLINE_GITHUB_PRIVATE_KEY must be the App's PEM private key");
    }
    auth = { kind: 'app', appId: Number(appId), privateKey: privateKey.replaceAll('\\n', '\n') };
  } else if (token !== undefined) {
    auth = { kind: 'token', token };
  } else {
    throw new ConfigError(
      'GitHub settings need credentials: MAINLINE_GITHUB_TOKEN, or MAINLINE_GITHUB_APP_ID with MAINLINE_GITHUB_PRIVATE_KEY',
    );
  }
  const apiUrl = (apiUrlRaw ?? 'https://api.github.com').replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(apiUrl);
  } catch {
    throw new ConfigError(`MAINLINE_GITHUB_API_URL must be an http(s) URL, got "${apiUrl}"`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new ConfigError(`MAINLINE_GITHUB_API_URL must be an http(s) URL, got "${apiUrl}"`);
  }
  const defaultHost = parsed.hostname === 'api.github.com' ? 'github.com' : parsed.hostname;
  const host = (readString(env, 'MAINLINE_GITHUB_HOST') ?? defaultHost).toLowerCase();
  return { apiUrl, host, auth, webhookSecret };
}

function readGitLab(env: Env): GitLabConfig | undefined {
  const token = readString(env, 'MAINLINE_GITLAB_TOKEN');
  const urlRaw = readString(env, 'MAINLINE_GITLAB_URL');
  const webhookSecret = readString(env, 'MAINLINE_GITLAB_WEBHOOK_SECRET');
  const hostRaw = readString(env, 'MAINLINE_GITLAB_HOST');
  if ([token, urlRaw, webhookSecret, hostRaw].every((v) => v === undefined)) return undefined;
  if (token === undefined) throw new ConfigError('GitLab settings need MAINLINE_GITLAB_TOKEN');
  const url = (urlRaw ?? 'https://gitlab.com').replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`MAINLINE_GITLAB_URL must be an http(s) URL, got "${url}"`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new ConfigError(`MAINLINE_GITLAB_URL must be an http(s) URL, got "${url}"`);
  }
  return {
    url,
    host: (hostRaw ?? parsed.host).toLowerCase(),
    token,
    webhookSecret,
    createPipelines: readCreatePipelines(env),
  };
}

/** A GitLab project's full path: a namespace (groups and subgroups) and the project's own path. */
const GITLAB_PROJECT_PATH = /^[a-z0-9_.][a-z0-9_.-]*(?:\/[a-z0-9_.][a-z0-9_.-]*)+$/;

/** MAINLINE_GITLAB_CREATE_PIPELINES: 1 or true (every project), 0 or false, or project paths. */
function readCreatePipelines(env: Env): boolean | readonly string[] {
  const name = 'MAINLINE_GITLAB_CREATE_PIPELINES';
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  const paths = raw.split(',').map((p) => p.trim());
  const bad = paths.find((p) => !GITLAB_PROJECT_PATH.test(p));
  if (bad !== undefined) {
    throw new ConfigError(
      `${name} must be 1 (every project), 0, or comma-separated project paths such as acme/app or acme/tools/api; "${bad}" is not a project path`,
    );
  }
  return paths;
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
    authFailLimitPerMinute: readInt(env, 'MAINLINE_AUTH_FAIL_LIMIT', 10, 0, 1_000_000),
    queueStateCache: readInt(env, 'MAINLINE_QUEUE_STATE_CACHE', 16, 0, 10_000),
    keptQueues: readInt(env, 'MAINLINE_KEPT_QUEUES', 16, 0, 10_000),
    forgeSettingsCache: readInt(env, 'MAINLINE_FORGE_SETTINGS_CACHE', 256, 0, 100_000),
    forgeSettingsTtlSeconds: readInt(env, 'MAINLINE_FORGE_SETTINGS_TTL', 60, 0, 3600),
    authFailBurst: readInt(env, 'MAINLINE_AUTH_FAIL_BURST', 20, 1, 1_000_000),
    authFailAddresses: readInt(env, 'MAINLINE_AUTH_FAIL_ADDRESSES', 10_000, 100, 10_000_000),
    trustProxy: readTrustProxy(env),
    bodyLimitBytes: readInt(env, 'MAINLINE_BODY_LIMIT', 20 * 1024 * 1024, 1024, 2 ** 31 - 1),
    maxFileBytes: readInt(env, 'MAINLINE_MAX_FILE_BYTES', 100 * 1024 * 1024, 1024, 2 ** 40),
    uploadLimitBytes: readInt(env, 'MAINLINE_UPLOAD_LIMIT', 256 * 1024 * 1024, 1024, 2 ** 40),
    bodyStallSeconds: readInt(env, 'MAINLINE_BODY_STALL_SECONDS', 30, 1, 3600),
    maxUploadAttempts: readInt(env, 'MAINLINE_MAX_UPLOAD_ATTEMPTS', 500_000, 1, 100_000_000),
    retentionDays: readRetentionDays(env),
    parseThreads: readInt(env, 'MAINLINE_PARSE_THREADS', 2, 0, 64),
    ingestConcurrency: readInt(env, 'MAINLINE_INGEST_CONCURRENCY', 2, 1, 64),
    healthSweepSeconds: readInt(env, 'MAINLINE_HEALTH_SWEEP_SECONDS', 600, 0, 86_400),
    foldIdleMs: readInt(env, 'MAINLINE_FOLD_IDLE_MS', 1500, 0, 3_600_000),
    logLevel: readLogLevel(env),
    metricsToken: readString(env, 'MAINLINE_METRICS_TOKEN'),
    metricsMaxQueues: readInt(env, 'MAINLINE_METRICS_MAX_QUEUES', 100, 0, 100_000),
    shutdownTimeoutSeconds: readInt(env, 'MAINLINE_SHUTDOWN_TIMEOUT', 10, 0, 3600),
    requestTimeoutSeconds: readInt(env, 'MAINLINE_REQUEST_TIMEOUT', 300, 1, 86_400),
    webhookPollMs: readInt(env, 'MAINLINE_WEBHOOK_POLL_MS', 1000, 0, 3_600_000),
    webhookTimeoutMs: readInt(env, 'MAINLINE_WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    webhookAllowPrivate: readFlag(env, 'MAINLINE_WEBHOOK_ALLOW_PRIVATE'),
    quarantineIndexIds: readInt(env, 'MAINLINE_QUARANTINE_INDEX_IDS', 200_000, 0, 100_000_000),
    tokenCacheSize: readInt(env, 'MAINLINE_TOKEN_CACHE', 10_000, 0, 10_000_000),
    tokenCacheSeconds: readInt(env, 'MAINLINE_TOKEN_CACHE_SECONDS', 5, 0, 300),
    repositoryCacheSize: readInt(env, 'MAINLINE_REPOSITORY_CACHE', 10_000, 0, 10_000_000),
    keptPages: readInt(env, 'MAINLINE_KEPT_PAGES', 64, 1, 100_000),
    keptDetails: readInt(env, 'MAINLINE_KEPT_DETAILS', 4096, 1, 10_000_000),
    keptBodyChars: readInt(env, 'MAINLINE_KEPT_BODY_CHARS', 4 * 1024 * 1024, 0, 2 ** 31),
    pageCacheSize: readInt(env, 'MAINLINE_PAGE_CACHE', 256, 1, 100_000),
    keptFailingTests: readInt(env, 'MAINLINE_KEPT_FAILING_TESTS', 200_000, 0, 100_000_000),
    keptTestTexts: readInt(env, 'MAINLINE_KEPT_TEST_TEXTS', 250_000, 0, 100_000_000),
    passCacheBytes: readInt(env, 'MAINLINE_PASS_CACHE_BYTES', 64 * 1024 * 1024, 0, 2 ** 40),
    mergeBaseCache: readInt(env, 'MAINLINE_MERGE_BASE_CACHE', 10_000, 0, 10_000_000),
    gitBranchCache: readInt(env, 'MAINLINE_GIT_BRANCH_CACHE', 1000, 0, 1_000_000),
    seenTestsCache: readInt(env, 'MAINLINE_SEEN_TESTS_CACHE', 500_000, 0, 100_000_000),
    testIdCache: readInt(env, 'MAINLINE_TEST_ID_CACHE', 250_000, 0, 100_000_000),
    failureCache: readInt(env, 'MAINLINE_FAILURE_CACHE', 10_000, 0, 10_000_000),
    github: readGitHub(env, cwd),
    gitlab: readGitLab(env),
  });
}
