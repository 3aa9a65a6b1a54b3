import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('loadConfig', () => {
  it('defaults to SQLite under ./data on 127.0.0.1:8080', () => {
    const c = loadConfig({}, '/srv/mainline');
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      dataDir: '/srv/mainline/data',
      databaseUrl: undefined,
      publicUrl: 'http://127.0.0.1:8080',
      rateLimitPerSecond: 100,
      rateLimitBurst: 200,
      bodyLimitBytes: 20 * 1024 * 1024,
      bootstrap: undefined,
      gitRoot: '/srv/mainline/data/git',
      queuePollMs: 1000,
      healthSweepSeconds: 600,
      parseThreads: 2,
      ingestConcurrency: 2,
      maxUploadAttempts: 500_000,
      retentionDays: 90,
    });
  });

  it('reads every variable it documents', () => {
    const c = loadConfig(
      {
        HOST: '0.0.0.0',
        PORT: '9000',
        MAINLINE_DATA_DIR: '/var/lib/mainline',
        DATABASE_URL: 'postgres://u@db/mainline',
        MAINLINE_PUBLIC_URL: 'https://mainline.example.com/',
        MAINLINE_BOOTSTRAP_ORG: 'acme',
        MAINLINE_BOOTSTRAP_TOKEN: 'a-long-enough-token',
        MAINLINE_RATE_LIMIT: '0',
        MAINLINE_BODY_LIMIT: '1048576',
        LOG_LEVEL: 'warn',
        MAINLINE_METRICS_TOKEN: 'scrape',
        MAINLINE_SHUTDOWN_TIMEOUT: '3',
        MAINLINE_MAX_FILE_BYTES: '2048',
        MAINLINE_MAX_UPLOAD_ATTEMPTS: '1000',
        MAINLINE_RETENTION_DAYS: '0',
        MAINLINE_PARSE_THREADS: '0',
        MAINLINE_INGEST_CONCURRENCY: '5',
        MAINLINE_HEALTH_SWEEP_SECONDS: '0',
        MAINLINE_GIT_ROOT: '/srv/git',
        MAINLINE_QUEUE_POLL_MS: '250',
      },
      '/',
    );
    expect(c).toMatchObject({
      host: '0.0.0.0',
      port: 9000,
      dataDir: '/var/lib/mainline',
      databaseUrl: 'postgres://u@db/mainline',
      publicUrl: 'https://mainline.example.com',
      bootstrap: { org: 'acme', token: 'a-long-enough-token' },
      rateLimitPerSecond: 0,
      bodyLimitBytes: 1048576,
      logLevel: 'warn',
      metricsToken: 'scrape',
      shutdownTimeoutSeconds: 3,
      maxFileBytes: 2048,
      maxUploadAttempts: 1000,
      retentionDays: 0,
      parseThreads: 0,
      ingestConcurrency: 5,
      healthSweepSeconds: 0,
      gitRoot: '/srv/git',
      queuePollMs: 250,
    });
  });

  it.each([
    [{ PORT: '70000' }, 'PORT must be a whole number from 0 to 65535, got "70000"'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must start with postgres://'],
    [
      { MAINLINE_BOOTSTRAP_ORG: 'acme' },
      'MAINLINE_BOOTSTRAP_ORG and MAINLINE_BOOTSTRAP_TOKEN must be set together',
    ],
    [
      { MAINLINE_BOOTSTRAP_ORG: 'Acme', MAINLINE_BOOTSTRAP_TOKEN: 'x'.repeat(20) },
      'MAINLINE_BOOTSTRAP_ORG must be a slug',
    ],
    [{ MAINLINE_BOOTSTRAP_ORG: 'acme', MAINLINE_BOOTSTRAP_TOKEN: 'short' }, 'at least 16 characters'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of'],
    [
      { MAINLINE_PARSE_THREADS: 'two' },
      'MAINLINE_PARSE_THREADS must be a whole number from 0 to 64, got "two"',
    ],
    [
      { MAINLINE_INGEST_CONCURRENCY: '0' },
      'MAINLINE_INGEST_CONCURRENCY must be a whole number from 1 to 64, got "0"',
    ],
    [
      { MAINLINE_MAX_UPLOAD_ATTEMPTS: '0' },
      'MAINLINE_MAX_UPLOAD_ATTEMPTS must be a whole number from 1 to 100000000, got "0"',
    ],
    [
      { MAINLINE_RETENTION_DAYS: '7' },
      'MAINLINE_RETENTION_DAYS must be 0 (keep results forever) or at least 30 (failure groups look back 30 days), got "7"',
    ],
    [{ MAINLINE_PUBLIC_URL: 'mainline.local' }, 'MAINLINE_PUBLIC_URL must be an http:// or https:// URL'],
    [{ MAINLINE_GITHUB_WEBHOOK_SECRET: 's' }, 'GitHub settings need credentials'],
    [{ MAINLINE_GITHUB_APP_ID: '12' }, 'needs both MAINLINE_GITHUB_APP_ID and MAINLINE_GITHUB_PRIVATE_KEY'],
    [
      { MAINLINE_GITHUB_APP_ID: 'x', MAINLINE_GITHUB_PRIVATE_KEY: 'k' },
      'MAINLINE_GITHUB_APP_ID must be a number',
    ],
    [{ MAINLINE_GITHUB_APP_ID: '1', MAINLINE_GITHUB_PRIVATE_KEY: 'nope' }, "the App's PEM private key"],
    [
      { MAINLINE_GITHUB_APP_ID: '1', MAINLINE_GITHUB_PRIVATE_KEY_FILE: '/nonexistent/key.pem' },
      'cannot be read',
    ],
    [
      { MAINLINE_GITHUB_TOKEN: 't', MAINLINE_GITHUB_API_URL: 'ftp://x' },
      'MAINLINE_GITHUB_API_URL must be an http(s) URL',
    ],
  ])('refuses %o with a message that says what to fix', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("sizes ingestion's caches from MAINLINE_SEEN_TESTS_CACHE, MAINLINE_TEST_ID_CACHE and MAINLINE_FAILURE_CACHE", () => {
    expect(loadConfig({}, '/')).toMatchObject({
      seenTestsCache: 500_000,
      testIdCache: 250_000,
      failureCache: 10_000,
    });
    const c = loadConfig(
      { MAINLINE_SEEN_TESTS_CACHE: '0', MAINLINE_TEST_ID_CACHE: '1000', MAINLINE_FAILURE_CACHE: '50' },
      '/',
    );
    expect(c).toMatchObject({ seenTestsCache: 0, testIdCache: 1000, failureCache: 50 });
    expect(() => loadConfig({ MAINLINE_TEST_ID_CACHE: 'many' }, '/')).toThrow(
      'MAINLINE_TEST_ID_CACHE must be a whole number from 0 to 100000000, got "many"',
    );
  });

  it('sizes the dashboard’s kept failing lists and search texts from MAINLINE_KEPT_FAILING_TESTS and _KEPT_TEST_TEXTS', () => {
    expect(loadConfig({}, '/')).toMatchObject({ keptFailingTests: 200_000, keptTestTexts: 250_000 });
    expect(
      loadConfig({ MAINLINE_KEPT_FAILING_TESTS: '0', MAINLINE_KEPT_TEST_TEXTS: '10' }, '/'),
    ).toMatchObject({ keptFailingTests: 0, keptTestTexts: 10 });
    expect(() => loadConfig({ MAINLINE_KEPT_TEST_TEXTS: '-1' }, '/')).toThrow(
      'MAINLINE_KEPT_TEST_TEXTS must be a whole number from 0 to 100000000, got "-1"',
    );
  });

  it('sizes the read, pass, merge-base and git branch caches from MAINLINE_KEPT_PAGES, _KEPT_DETAILS, _PAGE_CACHE, _PASS_CACHE_BYTES, _MERGE_BASE_CACHE and _GIT_BRANCH_CACHE', () => {
    expect(loadConfig({}, '/')).toMatchObject({
      keptPages: 64,
      keptDetails: 4096,
      pageCacheSize: 256,
      passCacheBytes: 64 * 1024 * 1024,
      mergeBaseCache: 10_000,
      gitBranchCache: 1000,
    });
    const c = loadConfig(
      {
        MAINLINE_KEPT_PAGES: '8',
        MAINLINE_KEPT_DETAILS: '100',
        MAINLINE_PAGE_CACHE: '32',
        MAINLINE_PASS_CACHE_BYTES: '0',
        MAINLINE_MERGE_BASE_CACHE: '0',
        MAINLINE_GIT_BRANCH_CACHE: '0',
      },
      '/',
    );
    expect(c).toMatchObject({
      keptPages: 8,
      keptDetails: 100,
      pageCacheSize: 32,
      passCacheBytes: 0,
      mergeBaseCache: 0,
      gitBranchCache: 0,
    });
    expect(() => loadConfig({ MAINLINE_KEPT_PAGES: '0' }, '/')).toThrow(
      'MAINLINE_KEPT_PAGES must be a whole number from 1 to 100000, got "0"',
    );
    expect(() => loadConfig({ MAINLINE_PASS_CACHE_BYTES: '64MB' }, '/')).toThrow(
      'MAINLINE_PASS_CACHE_BYTES must be a whole number from 0 to 1099511627776, got "64MB"',
    );
  });

  it('reads GitHub settings: a token for github.com, or an App on GitHub Enterprise Server', () => {
    expect(loadConfig({}).github).toBeUndefined();
    expect(
      loadConfig({ MAINLINE_GITHUB_TOKEN: 'ghp_x', MAINLINE_GITHUB_WEBHOOK_SECRET: 'sh' }).github,
    ).toEqual({
      apiUrl: 'https://api.github.com',
      host: 'github.com',
      auth: { kind: 'token', token: 'ghp_x' },
      webhookSecret: 'sh',
    });
    const key = '-----BEGIN PRIVATE KEY-----\\nabc\\n-----END PRIVATE KEY-----';
    expect(
      loadConfig({
        MAINLINE_GITHUB_APP_ID: '42',
        MAINLINE_GITHUB_PRIVATE_KEY: key,
        MAINLINE_GITHUB_API_URL: 'https://ghe.acme.internal/api/v3/',
      }).github,
    ).toEqual({
      apiUrl: 'https://ghe.acme.internal/api/v3',
      host: 'ghe.acme.internal',
      auth: {
        kind: 'app',
        appId: 42,
        privateKey: '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----',
      },
      webhookSecret: undefined,
    });
  });
});
