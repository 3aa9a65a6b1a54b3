import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { COMMENT_MARKER, GitHubForge, type GitHubLog } from '../../src/forge/github/index.ts';

type Reply = { status: number; body?: unknown; headers?: Record<string, string> };
type Handler = (method: string, path: string, body: Record<string, unknown>) => Reply;

const SHA = 'a'.repeat(40);
const MERGED = 'c'.repeat(40);
const repo = { id: 'r1', host: 'github.com', owner: 'o', name: 'r' };

let server: Server;
let baseUrl = '';
let handler: Handler;
let calls: string[] = [];
let auths: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => {
      raw += chunk.toString();
    });
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      calls.push(`${req.method} ${path}`);
      auths.push(req.headers.authorization ?? '');
      const reply = handler(req.method ?? '', path, raw === '' ? {} : JSON.parse(raw));
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((done) => server.close(() => done())));

beforeEach(() => {
  calls = [];
  auths = [];
});

function makeForge(log: GitHubLog = { info() {}, warn() {}, error() {} }) {
  return new GitHubForge({
    client: { baseUrl, auth: { kind: 'token', token: 't' }, log, retryAfterBaseMs: 1, writeIntervalMs: 0 },
  });
}

const ref = { status: 200, body: { ref: 'refs/heads/main', object: { sha: SHA, type: 'commit' } } };

describe('GitHubForge retries', () => {
  it('waits out a secondary rate limit and retries', async () => {
    let hits = 0;
    handler = () =>
      hits++ === 0
        ? {
            status: 403,
            body: { message: 'You have exceeded a secondary rate limit.' },
            headers: { 'retry-after': '1' },
          }
        : ref;
    const log = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    await expect(makeForge(log).head(repo, 'main')).resolves.toBe(SHA);
    expect(calls).toEqual(['GET /repos/o/r/git/ref/heads/main', 'GET /repos/o/r/git/ref/heads/main']);
    expect(log.warn).toHaveBeenCalledWith(
      expect.objectContaining({ retrying: true }),
      expect.stringContaining('secondary'),
    );
  });

  it('retries a 500', async () => {
    let hits = 0;
    handler = () => (hits++ === 0 ? { status: 500, body: { message: 'boom' } } : ref);
    await expect(makeForge().head(repo, 'main')).resolves.toBe(SHA);
    expect(calls).toHaveLength(2);
  });

  it('reports a merge whose answer was lost as merged when the PR shows merged at that head', async () => {
    let merged = false;
    handler = (method, path) => {
      if (method === 'PUT' && path === '/repos/o/r/pulls/7/merge') {
        merged = true; // applied, but the answer is lost
        return { status: 500, body: { message: 'Server Error' } };
      }
      const pull = {
        number: 7,
        title: 't',
        state: merged ? 'closed' : 'open',
        merged,
        user: { login: 'u' },
        head: { ref: 'feature', sha: SHA },
        base: { ref: 'main', sha: SHA },
        mergeable: true,
        merge_commit_sha: merged ? MERGED : null,
      };
      return { status: 200, body: pull };
    };
    const outcome = await makeForge().mergePullRequest(repo, {
      targetBranch: 'main',
      prNumber: 7,
      prTitle: 't',
      headSha: SHA,
      method: 'squash',
    });
    expect(outcome).toEqual({ ok: true, newTargetSha: MERGED });
    expect(calls.filter((c) => c.startsWith('PUT'))).toHaveLength(1);
  });

  it('keeps one status comment per PR, edited as the state changes', async () => {
    const comments: { id: number; body: string }[] = [];
    const statuses: string[] = [];
    handler = (method, path, body) => {
      if (method === 'GET' && path === '/repos/o/r/issues/7/comments') return { status: 200, body: comments };
      if (method === 'POST' && path === '/repos/o/r/issues/7/comments') {
        comments.push({ id: 1, body: String(body['body']) });
        return { status: 201, body: comments[0] };
      }
      if (method === 'PATCH' && path === '/repos/o/r/issues/comments/1') {
        comments[0] = { id: 1, body: String(body['body']) };
        return { status: 200, body: comments[0] };
      }
      if (method === 'POST' && path === `/repos/o/r/statuses/${SHA}`) {
        statuses.push(`${body['context']}=${body['state']}`);
        return { status: 201, body: {} };
      }
      return { status: 404, body: { message: 'Not Found' } };
    };
    const forge = makeForge();
    await forge.reportPrState(repo, { prNumber: 7, headSha: SHA, state: 'testing', reason: 'in run x' });
    await forge.reportPrState(repo, {
      prNumber: 7,
      headSha: SHA,
      state: 'merged',
      reason: 'merged as abc',
      details: 'test foo failed but is quarantined',
    });
    expect(comments).toHaveLength(1);
    expect(comments[0]?.body.startsWith(COMMENT_MARKER)).toBe(true);
    expect(comments[0]?.body).toContain('test foo failed but is quarantined');
    expect(calls.filter((c) => c === 'POST /repos/o/r/issues/7/comments')).toHaveLength(1);
    expect(calls.filter((c) => c === 'PATCH /repos/o/r/issues/comments/1')).toHaveLength(1);
    expect(statuses).toEqual(['mainline/merge-queue=pending', 'mainline/merge-queue=success']);
  });

  it('authenticates as an App installation found per repository', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    handler = (method, path) => {
      if (path === '/repos/o/r/installation') return { status: 200, body: { id: 5 } };
      if (method === 'POST' && path === '/app/installations/5/access_tokens') {
        return {
          status: 201,
          body: { token: 'inst', expires_at: new Date(Date.now() + 3_600_000).toISOString() },
        };
      }
      return ref;
    };
    const forge = new GitHubForge({
      client: {
        baseUrl,
        auth: {
          kind: 'app',
          appId: 1,
          privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        },
        retryAfterBaseMs: 1,
        writeIntervalMs: 0,
      },
    });
    await forge.head(repo, 'main');
    await forge.head(repo, 'main');
    expect(calls).toEqual([
      'GET /repos/o/r/installation',
      'POST /app/installations/5/access_tokens',
      'GET /repos/o/r/git/ref/heads/main',
      'GET /repos/o/r/git/ref/heads/main',
    ]);
    expect(auths[0]).toMatch(/^bearer /i);
    expect(auths.slice(2)).toEqual(['token inst', 'token inst']);
  });
});
