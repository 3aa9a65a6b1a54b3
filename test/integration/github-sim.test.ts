import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import { verify } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GitHubSimulator,
  generateAppKeyPair,
  startGitHubSimulator,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/github-sim/index.ts';

const SECRET = 'webhook-secret';
/** Octokit logs every non-2xx answer; these tests provoke many on purpose. */
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const APP_ID = 4242;

function status(promise: Promise<unknown>): Promise<number> {
  return promise.then(
    () => 200,
    (error: { status?: number }) => error.status ?? -1,
  );
}

describe('the GitHub simulator, driven through Octokit', () => {
  const keys = generateAppKeyPair();
  let sim: GitHubSimulator;
  let receiver: WebhookReceiver;
  let gh: Octokit;
  let repoCount = 0;

  /** A fresh repository per test, so tests do not share branches. */
  async function newRepo(files: Record<string, string> = { 'README.md': 'hello\n' }) {
    const name = `widgets-${++repoCount}`;
    await sim.createRepo('acme', name, { files });
    return { owner: 'acme', repo: name };
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver(SECRET);
    sim = await startGitHubSimulator({
      webhookUrl: receiver.url,
      webhookSecret: SECRET,
      app: { id: APP_ID, publicKey: keys.publicKey, slug: 'mainline-test' },
    });
    gh = new Octokit({
      log: quiet,
      baseUrl: sim.url,
      authStrategy: createAppAuth,
      auth: { appId: APP_ID, privateKey: keys.privateKey, installationId: sim.installationId('acme') },
    });
  });

  afterAll(async () => {
    await sim?.close();
    await receiver?.close();
  });

  it('creates, reads, moves and deletes refs', async () => {
    const r = await newRepo();
    const main = (await gh.rest.git.getRef({ ...r, ref: 'heads/main' })).data.object.sha;
    expect(main).toBe(await sim.head(r.owner, r.repo, 'main'));
    const created = await gh.rest.git.createRef({ ...r, ref: 'refs/heads/mainline/test-1', sha: main });
    expect(created.status).toBe(201);
    expect((await gh.rest.git.getRef({ ...r, ref: 'heads/mainline/test-1' })).data.object.sha).toBe(main);
    expect(await status(gh.rest.git.createRef({ ...r, ref: 'refs/heads/mainline/test-1', sha: main }))).toBe(
      422,
    );

    const ahead = await sim.commit(r.owner, r.repo, 'feature', { 'a.txt': 'a\n' }, 'Add a');
    await gh.rest.git.updateRef({ ...r, ref: 'heads/mainline/test-1', sha: ahead });
    expect(await sim.head(r.owner, r.repo, 'mainline/test-1')).toBe(ahead);
    expect(await status(gh.rest.git.updateRef({ ...r, ref: 'heads/mainline/test-1', sha: main }))).toBe(422);
    await gh.rest.git.updateRef({ ...r, ref: 'heads/mainline/test-1', sha: main, force: true });

    expect((await gh.rest.git.deleteRef({ ...r, ref: 'heads/mainline/test-1' })).status).toBe(204);
    expect(await status(gh.rest.git.getRef({ ...r, ref: 'heads/mainline/test-1' }))).toBe(404);
    expect(await status(gh.rest.git.deleteRef({ ...r, ref: 'heads/mainline/test-1' }))).toBe(422);
  });

  it('merges branches: a clean merge is a new commit, a contained head is 204, a conflict is 409', async () => {
    const r = await newRepo({ 'shared.txt': 'base\n' });
    const one = await sim.commit(r.owner, r.repo, 'one', { 'one.txt': '1\n' }, 'One');
    const clash = await sim.commit(r.owner, r.repo, 'clash-a', { 'shared.txt': 'a\n' }, 'A');
    await sim.commit(r.owner, r.repo, 'clash-b', { 'shared.txt': 'b\n' }, 'B');
    const main = (await sim.head(r.owner, r.repo, 'main'))!;
    await gh.rest.git.createRef({ ...r, ref: 'refs/heads/test', sha: main });

    const merged = await gh.rest.repos.merge({ ...r, base: 'test', head: one, commit_message: 'Test one' });
    expect(merged.status).toBe(201);
    expect(merged.data.commit.message).toBe('Test one');
    expect(merged.data.parents.map((p) => p.sha)).toEqual([main, one]);
    expect(await sim.fileAt(r.owner, r.repo, 'test', 'one.txt')).toBe('1\n');
    expect((await gh.rest.repos.merge({ ...r, base: 'test', head: one })).status).toBe(204);

    await gh.rest.repos.merge({ ...r, base: 'test', head: clash });
    const conflict = await gh.rest.repos.merge({ ...r, base: 'test', head: 'clash-b' }).catch((e) => e);
    expect(conflict.status).toBe(409);
    expect(conflict.response.data.message).toBe('Merge conflict');
    expect(await status(gh.rest.repos.merge({ ...r, base: 'nope', head: one }))).toBe(404);

    const cmp = await gh.rest.repos.compareCommits({ ...r, base: 'main', head: 'test' });
    // One, A and the two merge commits.
    expect(cmp.data).toMatchObject({ status: 'ahead', ahead_by: 4, behind_by: 0 });
    expect(cmp.data.merge_base_commit.sha).toBe(main);
    const file = await gh.rest.repos.getContent({ ...r, path: 'shared.txt', ref: 'test' });
    const content = file.data as { content: string; encoding: string };
    expect(Buffer.from(content.content, 'base64').toString('utf8')).toBe('a\n');
  });

  it('merges a pull request only at its current head; the base branch then holds the change', async () => {
    const r = await newRepo();
    const n = await sim.openPullRequest(r.owner, r.repo, {
      head: 'feature',
      title: 'Add f',
      files: { 'f.txt': 'f\n' },
    });
    const pr = (await gh.rest.pulls.get({ ...r, pull_number: n })).data;
    expect(pr).toMatchObject({
      number: n,
      state: 'open',
      merged: false,
      mergeable: true,
      user: { login: 'dev' },
    });
    const oldHead = pr.head.sha;
    const newHead = await sim.pushToPullRequest(r.owner, r.repo, n, { 'f.txt': 'f2\n' });
    expect((await gh.rest.pulls.get({ ...r, pull_number: n })).data.head.sha).toBe(newHead);

    const stale = await gh.rest.pulls.merge({ ...r, pull_number: n, sha: oldHead }).catch((e) => e);
    expect(stale.status).toBe(409);
    const done = await gh.rest.pulls.merge({ ...r, pull_number: n, sha: newHead, merge_method: 'squash' });
    expect(done.data.merged).toBe(true);
    expect(await sim.head(r.owner, r.repo, 'main')).toBe(done.data.sha);
    expect(await sim.fileAt(r.owner, r.repo, 'main', 'f.txt')).toBe('f2\n');
    expect(await sim.log(r.owner, r.repo, 'main')).toEqual([`Add f (#${n})`, 'Initial commit']);
    expect(await sim.pullRequest(r.owner, r.repo, n)).toMatchObject({ state: 'closed', merged: true });
    expect(await status(gh.rest.pulls.merge({ ...r, pull_number: n }))).toBe(405);

    await sim.flush();
    const closed = sim.deliveriesOf('pull_request', 'closed').at(-1);
    expect(closed?.payload).toMatchObject({ number: n, pull_request: { merged: true } });
    const push = sim.deliveriesOf('push').at(-1);
    expect(push?.payload).toMatchObject({ ref: 'refs/heads/main', after: done.data.sha });
    expect(sim.requestsTo('PUT', `/repos/acme/${r.repo}/pulls/${n}/merge`).map((q) => q.status)).toEqual([
      409, 200, 405,
    ]);
  });

  it('reports a conflicting pull request as not mergeable, and rebase-merges a clean one', async () => {
    const r = await newRepo({ 'x.txt': 'x\n' });
    const bad = await sim.openPullRequest(r.owner, r.repo, {
      head: 'bad',
      title: 'Bad',
      files: { 'x.txt': 'b\n' },
    });
    const good = await sim.openPullRequest(r.owner, r.repo, {
      head: 'good',
      title: 'Good',
      files: { 'y.txt': 'y\n' },
    });
    await sim.commit(r.owner, r.repo, 'main', { 'x.txt': 'main\n' }, 'Main moves');
    expect((await gh.rest.pulls.get({ ...r, pull_number: bad })).data.mergeable).toBe(false);
    expect(await status(gh.rest.pulls.merge({ ...r, pull_number: bad }))).toBe(405);
    await gh.rest.pulls.merge({ ...r, pull_number: good, merge_method: 'rebase' });
    expect(await sim.log(r.owner, r.repo, 'main')).toEqual(['Good', 'Main moves', 'Initial commit']);
  });

  it('stores and edits comments', async () => {
    const r = await newRepo();
    const n = await sim.openPullRequest(r.owner, r.repo, {
      head: 'c',
      title: 'C',
      files: { 'c.txt': 'c\n' },
    });
    await sim.comment(r.owner, r.repo, n, '/mainline merge', 'alice');
    const mine = await gh.rest.issues.createComment({ ...r, issue_number: n, body: 'Queued.' });
    expect(mine.status).toBe(201);
    expect(mine.data.user?.login).toBe('mainline-test[bot]');
    await gh.rest.issues.updateComment({ ...r, comment_id: mine.data.id, body: 'Merged.' });
    const list = await gh.rest.issues.listComments({ ...r, issue_number: n, per_page: 100 });
    expect(list.data.map((c) => [c.user?.login, c.body])).toEqual([
      ['alice', '/mainline merge'],
      ['mainline-test[bot]', 'Merged.'],
    ]);
    expect(sim.comments(r.owner, r.repo, n).map((c) => c.body)).toEqual(['/mainline merge', 'Merged.']);
    expect(sim.deliveriesOf('issue_comment', 'created')[0]?.payload).toMatchObject({
      issue: { number: n, pull_request: {} },
      comment: { body: '/mainline merge', user: { login: 'alice' } },
    });
  });

  it('records statuses and check runs, from Mainline and from CI', async () => {
    const r = await newRepo();
    const sha = (await sim.head(r.owner, r.repo, 'main'))!;
    await gh.rest.repos.createCommitStatus({ ...r, sha, state: 'pending', context: 'mainline' });
    await sim.setStatus(r.owner, r.repo, sha, {
      context: 'ci/build',
      state: 'success',
      targetUrl: 'https://ci/1',
    });
    await gh.rest.repos.createCommitStatus({ ...r, sha, state: 'success', context: 'mainline' });
    const combined = (await gh.rest.repos.getCombinedStatusForRef({ ...r, ref: 'main' })).data;
    expect(combined.state).toBe('success');
    expect(combined.statuses.map((s) => [s.context, s.state]).sort()).toEqual([
      ['ci/build', 'success'],
      ['mainline', 'success'],
    ]);
    expect(sim.statuses(r.owner, r.repo, sha)).toHaveLength(3);

    const run = await gh.rest.checks.create({
      ...r,
      name: 'mainline/queue',
      head_sha: sha,
      status: 'in_progress',
    });
    expect(run.status).toBe(201);
    await gh.rest.checks.update({ ...r, check_run_id: run.data.id, conclusion: 'success' });
    await sim.completeCheck(r.owner, r.repo, sha, {
      name: 'test',
      conclusion: 'failure',
      detailsUrl: 'https://ci/2',
    });
    const runs = (await gh.rest.checks.listForRef({ ...r, ref: sha })).data;
    expect(runs.total_count).toBe(2);
    expect(runs.check_runs.map((c) => [c.name, c.status, c.conclusion]).sort()).toEqual([
      ['mainline/queue', 'completed', 'success'],
      ['test', 'completed', 'failure'],
    ]);
    expect(sim.deliveriesOf('check_suite', 'completed').at(-1)?.payload).toMatchObject({
      check_suite: { head_sha: sha, conclusion: 'failure' },
    });
    expect(sim.deliveriesOf('status').at(-1)?.payload).toMatchObject({
      sha,
      context: 'mainline',
      state: 'success',
    });
  });

  it('serves branch protection and rulesets, and enforces required checks on merges', async () => {
    const r = await newRepo();
    expect(await status(gh.rest.repos.getStatusChecksProtection({ ...r, branch: 'main' }))).toBe(404);
    expect((await gh.rest.repos.getBranchRules({ ...r, branch: 'main' })).data).toEqual([]);
    sim.protectBranch(r.owner, r.repo, 'main', { contexts: ['ci/build'] });
    sim.setRuleset(r.owner, r.repo, 'main', { contexts: ['lint'] });
    const protection = (await gh.rest.repos.getStatusChecksProtection({ ...r, branch: 'main' })).data;
    expect(protection.contexts).toEqual(['ci/build']);
    const rules = (await gh.rest.repos.getBranchRules({ ...r, branch: 'main' })).data;
    expect(rules).toMatchObject([
      { type: 'required_status_checks', parameters: { required_status_checks: [{ context: 'lint' }] } },
    ]);

    const n = await sim.openPullRequest(r.owner, r.repo, {
      head: 'p',
      title: 'P',
      files: { 'p.txt': 'p\n' },
    });
    const head = (await sim.pullRequest(r.owner, r.repo, n)).head.sha;
    expect((await sim.pullRequest(r.owner, r.repo, n)).mergeable_state).toBe('blocked');
    expect(await status(gh.rest.pulls.merge({ ...r, pull_number: n, sha: head }))).toBe(405);
    await sim.setStatus(r.owner, r.repo, head, { context: 'ci/build', state: 'success' });
    await sim.completeCheck(r.owner, r.repo, head, { name: 'lint', conclusion: 'success' });
    expect((await gh.rest.pulls.merge({ ...r, pull_number: n, sha: head })).data.merged).toBe(true);
  });

  it('runs the GitHub App flow: JWT → installation → installation token → repository calls', async () => {
    const r = await newRepo();
    const app = new Octokit({
      log: quiet,
      baseUrl: sim.url,
      authStrategy: createAppAuth,
      auth: { appId: APP_ID, privateKey: keys.privateKeyPkcs1 },
    });
    const installation = (await app.rest.apps.getRepoInstallation(r)).data;
    expect(installation.id).toBe(sim.installationId('acme'));
    const auth = createAppAuth({ appId: APP_ID, privateKey: keys.privateKey, request: app.request });
    const { token } = await auth({ type: 'installation', installationId: installation.id });
    expect(token).toMatch(/^ghs_/);
    const plain = new Octokit({ log: quiet, baseUrl: sim.url, auth: token });
    expect((await plain.rest.pulls.list(r)).status).toBe(200);

    const stranger = generateAppKeyPair();
    const forged = new Octokit({
      log: quiet,
      baseUrl: sim.url,
      authStrategy: createAppAuth,
      auth: { appId: APP_ID, privateKey: stranger.privateKey },
    });
    expect(await status(forged.rest.apps.getRepoInstallation(r))).toBe(401);
    expect(
      await status(new Octokit({ log: quiet, baseUrl: sim.url, auth: 'ghs_nope' }).rest.pulls.list(r)),
    ).toBe(401);
    expect(await status(new Octokit({ log: quiet, baseUrl: sim.url }).rest.pulls.list(r))).toBe(401);
    expect(await status(plain.rest.pulls.list({ owner: 'other', repo: 'x' }))).toBe(404);
  });

  it('signs webhooks, records the answer, redelivers byte for byte, and sends bad signatures on demand', async () => {
    const r = await newRepo();
    const before = receiver.received.length;
    const n = await sim.openPullRequest(r.owner, r.repo, {
      head: 'w',
      title: 'W',
      files: { 'w.txt': 'w\n' },
    });
    const got = receiver.received.slice(before);
    expect(got.map((d) => d.event)).toEqual(['push', 'pull_request']);
    expect(got.every((d) => d.valid)).toBe(true);
    for (const d of got) expect(await verify(SECRET, d.body, d.signature)).toBe(true);
    expect(await verify('another-secret', got[0]!.body, got[0]!.signature)).toBe(false);
    const opened = sim.deliveriesOf('pull_request', 'opened').at(-1)!;
    expect(opened.status).toBe(202);
    expect(opened.payload).toMatchObject({
      number: n,
      repository: { full_name: `acme/${r.repo}`, owner: { login: 'acme' } },
      installation: { id: sim.installationId('acme') },
    });

    const again = await sim.redeliver(opened.id);
    expect(again).toMatchObject({
      id: opened.id,
      body: opened.body,
      signature: opened.signature,
      redelivery: true,
    });
    const last = receiver.received.at(-1)!;
    expect([last.id, last.body, last.signature, last.valid]).toEqual([
      opened.id,
      opened.body,
      opened.signature,
      true,
    ]);

    const forged = await sim.sendRaw('ping', { zen: 'hi' }, { signature: 'sha256=deadbeef' });
    expect(forged.status).toBe(401);
    expect((await sim.sendRaw('ping', { zen: 'hi' })).status).toBe(202);

    sim.setWebhookUrl(null);
    await sim.comment(r.owner, r.repo, n, 'nobody listens');
    expect(sim.deliveries.at(-1)).toMatchObject({ event: 'issue_comment', status: null });
    sim.setWebhookUrl(receiver.url);
  });

  it('injects faults: one 500, then the same call succeeds; rate limits carry their headers', async () => {
    const r = await newRepo();
    const path = `/repos/acme/${r.repo}/git/ref/heads/main`;
    sim.faults.fail('GET', path, 500);
    expect(await status(gh.rest.git.getRef({ ...r, ref: 'heads/main' }))).toBe(500);
    expect((await gh.rest.git.getRef({ ...r, ref: 'heads/main' })).status).toBe(200);
    expect(sim.requestsTo('GET', path).map((q) => [q.status, q.fault])).toEqual([
      [500, true],
      [200, false],
    ]);

    sim.faults.inject({
      path: `/repos/acme/${r.repo}/pulls`,
      response: { kind: 'secondary-rate-limit', retryAfterSeconds: 7 },
    });
    const limited = await gh.rest.pulls.list(r).catch((e) => e);
    expect(limited.status).toBe(403);
    expect(limited.response.headers['retry-after']).toBe('7');
    expect(limited.message).toMatch(/secondary rate limit/);
    sim.faults.inject({ path: '/repos/acme/*/pulls', response: { kind: 'primary-rate-limit' } });
    const primary = await gh.rest.pulls.list(r).catch((e) => e);
    expect(primary.response.headers['x-ratelimit-remaining']).toBe('0');
    expect(sim.faults.pending).toBe(0);
  });

  it('serializes concurrent calls: two merges of one PR, one wins', async () => {
    const r = await newRepo();
    const n = await sim.openPullRequest(r.owner, r.repo, {
      head: 'race',
      title: 'Race',
      files: { 'r.txt': 'r\n' },
    });
    const results = await Promise.all([
      status(gh.rest.pulls.merge({ ...r, pull_number: n })),
      status(gh.rest.pulls.merge({ ...r, pull_number: n })),
    ]);
    expect(results.sort()).toEqual([200, 405]);
    expect(await sim.log(r.owner, r.repo, 'main')).toEqual([
      `Merge pull request #${n} from acme/race`,
      'Initial commit',
    ]);
  });

  it('answers unknown routes with 404 and malformed JSON with 400', async () => {
    const r = await newRepo();
    const { token } = (await gh.auth({ type: 'installation' })) as { token: string };
    const headers = { authorization: `token ${token}`, 'content-type': 'application/json' };
    const unknown = await fetch(`${sim.url}/repos/acme/${r.repo}/nothing-here`, { headers });
    expect([unknown.status, await unknown.json()]).toEqual([
      404,
      expect.objectContaining({ message: 'Not Found' }),
    ]);
    const bad = await fetch(`${sim.url}/repos/acme/${r.repo}/git/refs`, {
      method: 'POST',
      headers,
      body: '{',
    });
    expect(bad.status).toBe(400);
    expect(sim.errors).toEqual([]);
  });
});

describe('the GitHub simulator with a personal access token and no webhook URL', () => {
  it('authorizes the token, acts as its user, and records webhooks as undelivered', async () => {
    const sim = await startGitHubSimulator({
      webhookSecret: SECRET,
      token: 'pat-123',
      tokenLogin: 'queue-bot',
    });
    try {
      await sim.createRepo('acme', 'tools', { defaultBranch: 'trunk' });
      const gh = new Octokit({ log: quiet, baseUrl: sim.url, auth: 'pat-123' });
      const r = { owner: 'acme', repo: 'tools' };
      expect((await gh.rest.users.getAuthenticated()).data.login).toBe('queue-bot');
      const n = await sim.openPullRequest('acme', 'tools', {
        head: 'x',
        title: 'X',
        files: { 'x.txt': 'x\n' },
      });
      expect((await gh.rest.pulls.get({ ...r, pull_number: n })).data.base.ref).toBe('trunk');
      const c = await gh.rest.issues.createComment({ ...r, issue_number: n, body: 'hi' });
      expect(c.data.user?.login).toBe('queue-bot');
      expect(
        await status(new Octokit({ log: quiet, baseUrl: sim.url, auth: 'nope' }).rest.pulls.list(r)),
      ).toBe(401);
      expect(await status(gh.rest.apps.getAuthenticated())).toBe(404);
      await sim.flush();
      expect(sim.deliveries.length).toBeGreaterThan(0);
      expect(sim.deliveries.every((d) => d.status === null && d.url === null)).toBe(true);
      expect(sim.deliveries.some((d) => 'installation' in d.payload)).toBe(false);
    } finally {
      await sim.close();
    }
  });
});
