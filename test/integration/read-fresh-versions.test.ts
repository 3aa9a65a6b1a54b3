// On PostgreSQL every kept read asks for the repository's version, and concurrent asks for one key
// share a statement (app/health/read-answers.ts UnchangedReads, lib/fresh-reads.ts) — but only one
// sent after they all arrived, so a write another server committed before a read arrived is in that
// read's answer even while other reads of the same key are under way. Over HTTP, on both engines
// (SQLite reads the version again once anything was committed).
import type { FastifyInstance } from 'fastify';
import type { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { buildApp } from '../../src/http/app.ts';
import { REPO } from '../support/app.ts';
import { storedTestIds } from '../support/reads.ts';
import { replicaHandle } from '../support/replica.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

type Json = Record<string, unknown>;
const NAMES = ['alpha', 'beta', 'gamma'];
const scope = { repo: REPO, org_url_slug: 'acme' };
/** The read version's statement (store/uploads/rollups.ts readVersion). */
const VERSION_SQL = /min\(created_at\) as oldest/;

/** A promise and the function that resolves it. */
function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((yes) => {
    resolve = yes;
  });
  return { promise, resolve };
}

/**
 * Holds the rows of the next statement matching `pattern` on `database` until `release` resolves: it
 * runs (its snapshot taken) at once, `ran` resolves when it has.
 */
function holdNext(database: Database, pattern: RegExp) {
  const executor = database.db.getExecutor();
  const original = executor.executeQuery.bind(executor);
  const ran = gate();
  const release = gate();
  let holding = true;
  const spy = vi.spyOn(executor, 'executeQuery').mockImplementation(async (query: CompiledQuery, id) => {
    if (!holding || !pattern.test(query.sql)) return original(query, id);
    holding = false;
    const result = await original(query, id);
    ran.resolve();
    await release.promise;
    return result;
  });
  return { ran, release, spy };
}

describe('kept reads coalesce version statements without missing a commit', () => {
  const t = useTestApp();
  /** Another server on the same database: its own connection, its own caches. */
  let other: { app: FastifyInstance; database: Database };
  let base = '';
  const ids = new Map<string, string>();

  const details = async (testId: string): Promise<Json> => {
    const res = await fetch(`${base}/v1/flaky-tests/get-test-details`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
      body: JSON.stringify({ ...scope, test_id: testId }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    return (JSON.parse(text) as Json)['test'] as Json;
  };
  const linkTicket = async (testId: string, ticket: string) => {
    const res = await other.app.inject({
      method: 'POST',
      url: '/v1/flaky-tests/link-ticket-to-test-case',
      headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
      payload: JSON.stringify({ repo: REPO, test_case_id: testId, external_ticket_id: ticket }),
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  const ticketOf = (record: Json) => (record['ticket'] as Json | undefined)?.['html_url'];

  beforeAll(async () => {
    const res = await upload(t, t.orgToken, [
      { name: 'r.xml', content: junitXml(NAMES.map((name) => ({ name }))) },
    ]);
    expect(res.statusCode).toBe(200);
    for (const [name, id] of await storedTestIds(t)) ids.set(name, id);
    const config = loadConfig({ LOG_LEVEL: 'silent', MAINLINE_RATE_LIMIT: '0', ...t.db.env });
    const database = replicaHandle(t.db);
    other = { app: await buildApp({ config, database }), database };
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    base = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await other?.app.close();
    await other?.database.close().catch(() => undefined);
  });

  it('answers reads that arrive after a commit, while an older version statement is under way, with the commit', async () => {
    const beta = ids.get('beta') as string;
    // Kept: the answer at the version before the commit.
    expect(ticketOf(await details(beta))).toBeUndefined();
    // A commit that leaves the repository's version as it is, so that SQLite too reads the version
    // again below (it keeps it while nothing was committed).
    const created = await other.app.inject({
      method: 'POST',
      url: '/v1/repositories/create',
      headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
      payload: JSON.stringify({ repo: { host: 'github.com', owner: 'acme', name: 'elsewhere' } }),
    });
    expect(created.statusCode, created.body).toBe(200);

    // The next version statement runs (its snapshot taken) but its rows are held back until released.
    const { ran, release, spy } = holdNext(t.db.database, VERSION_SQL);
    // Counts the kept reads' version asks, to know when the later reads have arrived.
    const get = vi.spyOn(t.caches.unchanged, 'get');
    const asked = () => get.mock.calls.filter(([, key]) => key.startsWith('read|')).length;
    try {
      const early = details(beta);
      await ran.promise;
      await linkTicket(beta, 'KAN-1');
      // Arriving after the commit, while the early read's statement (from before it) is under way.
      const later = Array.from({ length: 4 }, () => details(beta));
      await vi.waitFor(() => expect(asked()).toBe(5), { timeout: 10_000, interval: 5 });
      release.resolve();
      const answers = await Promise.all(later);
      for (const answer of answers) expect(ticketOf(answer)).toMatch(/ticket=KAN-1$/);
      // The early read arrived before the commit: either answer is exact for it.
      await early;
    } finally {
      release.resolve();
      spy.mockRestore();
      get.mockRestore();
    }
    expect(ticketOf(await details(beta))).toMatch(/ticket=KAN-1$/);
  });

  it('answers every read started after a commit with it, under a steady stream of concurrent reads', async () => {
    const gamma = ids.get('gamma') as string;
    /** The last round whose ticket was committed: every read started after it must show it (or later). */
    let committed = 0;
    let stop = false;
    const stale: unknown[] = [];
    const roundOf = (record: Json) => Number(/ticket=KAN-(\d+)$/.exec(String(ticketOf(record)))?.[1] ?? 0);
    const reader = async () => {
      while (!stop) {
        const expected = committed;
        const record = await details(gamma);
        if (roundOf(record) < expected) stale.push(record);
      }
    };
    const readers = Array.from({ length: 8 }, reader);
    for (let round = 1; round <= 5; round++) {
      await linkTicket(gamma, `KAN-${round}`);
      committed = round;
      expect(roundOf(await details(gamma))).toBe(round);
    }
    stop = true;
    await Promise.all(readers);
    expect(stale).toEqual([]);
  });

  it('gives each concurrent caller its own error, naming the repository as that caller spelled it', async () => {
    const ask = (name: string) =>
      fetch(`${base}/v1/flaky-tests/get-repository-settings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
        body: JSON.stringify({ ...scope, repo: { ...REPO, name } }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }));
    // The first read of the missing repository runs but its rows are held back until released.
    const { ran, release, spy } = holdNext(t.db.database, /from "repositories"/);
    const get = vi.spyOn(t.caches.answers.repositorySettings, 'get');
    try {
      const first = ask('nowhere');
      await ran.promise;
      // Two callers wait for the same next read; it is made with the first one's spelling.
      const later = [ask('NoWhere'), ask('NOWHERE')];
      await vi.waitFor(() => expect(get).toHaveBeenCalledTimes(3), { timeout: 10_000, interval: 5 });
      release.resolve();
      const answers = await Promise.all([first, ...later]);
      expect(answers.map((a) => a.status)).toEqual([404, 404, 404]);
      for (const [i, name] of ['nowhere', 'NoWhere', 'NOWHERE'].entries()) {
        expect(JSON.stringify(answers[i]?.body)).toContain(`github.com/acme/${name} is not known`);
      }
    } finally {
      release.resolve();
      spy.mockRestore();
      get.mockRestore();
    }
  });
});
