// Every in-memory cache of the app, made once per AppContext and sized from the configuration: a
// test app gets fresh ones, and nothing is kept at module level. Each cache is correct on its own
// terms (see its module): the health reads' caches are keyed by the repository's health_version,
// which every store writer of test_cases bumps (store/tenancy/repos.ts writeTestHealth), so no write is missed.
import type { Config } from '../config.ts';
import { Lru } from '../lib/lru.ts';
import { WeighedLru } from '../lib/weighed-lru.ts';
import { PassBlobs } from '../store/uploads/passes.ts';
import type { AllTestsPage } from './dashboard/all-tests.ts';
import type { FailingRow } from './dashboard/failing.ts';
import { FailingLists } from './dashboard/failing-lists.ts';
import { TestSearchTexts } from './dashboard/test-search.ts';
import { WriterCache } from './github/writers.ts';
import { PageCache } from './health/page-cache.ts';
import { IdentifierIds, QuarantineIndexCache } from './health/quarantine-index.ts';
import { ReadAnswers, UnchangedReads } from './health/read-answers.ts';
import type { unhealthyRecord } from './health/records.ts';
import { MeansFolds } from './ingest/means-fold.ts';
import { Derivation } from './ingest/prepare/derive.ts';
import { SeenTestsCache } from './ingest/prepare/seen-cache.ts';
import type { Forge } from './ports.ts';
import { ForgeSettingsMemo } from './queue/forge-settings-cache.ts';
import { KeptQueueAnswers } from './queue/kept-answers.ts';
import { QueueStateCache } from './queue/state-cache.ts';
import { QueueStepListeners } from './queue/step-listeners.ts';
import { RepositoryCache } from './repositories.ts';
import { TokenCache } from './tokens.ts';
import { EndpointPresence } from './webhooks-out/endpoints.ts';

/** Identifier ids remembered at most, whatever MAINLINE_QUARANTINE_INDEX_IDS says. */
const MAX_REMEMBERED_IDS = 50_000;

export function createCaches(config: Config) {
  return {
    /** Large getQuarantineConfig bodies kept parsed, by organization and bytes (http/body-checks.ts). */
    parsedBodies: new WeighedLru<{ readonly orgId: string; readonly value: unknown }>(config.keptBodyChars),
    /** Kept JSON of read answers, per route (health/read-answers.ts). */
    answers: {
      testDetails: new ReadAnswers(config.keptDetails),
      failingPages: new ReadAnswers(config.keptPages),
      unhealthyPages: new ReadAnswers(config.keptPages),
      quarantined: new ReadAnswers(config.keptPages),
      /** repositories/list pages by the organization's repository count (repositories.ts). */
      repositoryLists: new ReadAnswers(config.keptPages),
      /** repositories/get answers: a repository's identity never changes (repositories.ts). */
      repositories: new ReadAnswers(config.keptDetails),
      /** get-repository-settings answers while the database is unchanged (health/settings.ts). */
      repositorySettings: new UnchangedReads(config.keptDetails),
    },
    /** Repositories' versions and quarantine settings while the database is unchanged (health/read-answers.ts). */
    unchanged: new UnchangedReads(config.repositoryCacheSize),
    /** Records of list-unhealthy-tests pages by health_version (health/page-cache.ts). */
    unhealthyPages: new PageCache<ReturnType<typeof unhealthyRecord>>(config.pageCacheSize),
    /** The dashboard's failing-tests lists by read version (dashboard/failing-lists.ts). */
    failingLists: new FailingLists<FailingRow>(config.keptFailingTests),
    /** The all-tests page's search texts by ordinal count (dashboard/test-search.ts). */
    testSearch: new TestSearchTexts(config.keptTestTexts),
    /** Pages of the dashboard's all-tests list by health_version (dashboard/all-tests.ts). */
    allTestsPages: new Lru<Omit<AllTestsPage, 'repository'>>(config.pageCacheSize),
    /** Quarantined ids per repository by health_version (health/quarantine-index.ts). */
    quarantineIndex: new QuarantineIndexCache(config.quarantineIndexIds),
    /** Test ids of identifiers getQuarantineConfig was asked about (health/quarantine-index.ts). */
    identifierIds: new IdentifierIds(Math.min(config.quarantineIndexIds, MAX_REMEMBERED_IDS)),
    /** Decoded pass blobs of recent uploads, up to MAINLINE_PASS_CACHE_BYTES (store/uploads/passes.ts). */
    passBlobs: new PassBlobs(config.passCacheBytes),
    /** Merge bases of commit pairs, for the git forge the app builds (forge/git/objects.ts). */
    mergeBases: new Lru<{ readonly base: string | null }>(config.mergeBaseCache),
    /** Branch names `git check-ref-format` accepted, for the same forge (forge/git/names.ts). */
    gitRefNames: new Lru<true>(config.gitBranchCache),
    /** `.mainline.yaml` readings by repository and branch head, for the same forge (forge/git-repository-forge.ts). */
    gitBranchSettings: new Lru<{
      readonly head: string;
      readonly value: Awaited<ReturnType<Forge['requiredStatuses']>>;
    }>(config.gitBranchCache),
    /** GitHub users' recently asked roles, by repository, for PR-comment commands (github/writers.ts). */
    githubWriters: new WriterCache(),
    /** GitLab users' roles, the same way, for merge-request notes. */
    gitlabWriters: new WriterCache(),
    /** Callers of recently authenticated tokens (tokens.ts, MAINLINE_TOKEN_CACHE[_SECONDS]). */
    tokens: new TokenCache(config.tokenCacheSize, config.tokenCacheSeconds * 1000),
    /** Repository identities by organization and name (repositories.ts, MAINLINE_REPOSITORY_CACHE). */
    repositories: new RepositoryCache(config.repositoryCacheSize),
    /** What GitHub branches say about their queues, for getQueue (queue/forge-settings-cache.ts). */
    forgeSettings: new ForgeSettingsMemo(config.forgeSettingsCache, config.forgeSettingsTtlSeconds * 1000),
    /** Parsed queue states by (queue, version) (queue/state-cache.ts). */
    queueStates: new QueueStateCache(config.queueStateCache),
    /** getQueue's serialized answers, one per queue, by version and settings (queue/kept-answers.ts). */
    queueAnswers: new KeptQueueAnswers(config.keptQueues),
    /** Who is told of each saved queue step: the metrics (queue/step-listeners.ts). */
    queueSteps: new QueueStepListeners(),
    /** Whether repositories' organizations have webhook endpoints, for queue steps (webhooks-out/endpoints.ts). */
    webhookEndpoints: new EndpointPresence(),
    /** Background folds of the duration means after uploads (ingest/means-fold.ts). */
    meansFolds: new MeansFolds(),
    /** What ingestion knows of each repository's tests by health_version (ingest/prepare/seen-cache.ts). */
    seenTests: new SeenTestsCache(config.seenTestsCache),
    /** Test ids and failure facts derived before (ingest/prepare/derive.ts). */
    derivation: new Derivation({
      testIds: config.testIdCache,
      failingTests: config.failureCache,
      failureTexts: Math.ceil(config.failureCache / 5),
    }),
  };
}

/** The app's caches (createCaches). */
export type Caches = ReturnType<typeof createCaches>;
