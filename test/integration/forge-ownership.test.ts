import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { grantOwner, listForgeGrants, revokeOwner } from '../../src/app/forge-grants.ts';
import { createToken } from '../../src/app/tokens.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { GH_REPO, GitHubScenario } from '../support/github-scenario.ts';
import {
  type GitHubSimulator,
  generateAppKeyPair,
  startGitHubSimulator,
} from '../support/github-sim/index.ts';
import { runCli } from '../support/process.ts';
import { storedQueueState } from '../support/queue-rows.ts';
import { queueId } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';

const { owner, name } = GH_REPO;
const GITLAB = { host: 'gitlab.example.com', owner, name };

/** The queue state of an organization's repository, read from the database (the API may refuse it). */
async function queuedPrs(s: GitHubScenario, orgSlug: string): Promise<number[]> {
  const id = await queueId(s.t, orgSlug);
  return (await storedQueueState(s.t.db.database.db, id)).prs.keys();
}

describe('forge ownership: an organization acts only on the GitHub accounts it was granted', () => {
  let s: GitHubScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('an organization not granted the owner gets 403 on createQueue, submit, uploads and forge-data reads', async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off' });
    const number = await s.sim.openPullRequest(owner, name, {
      head: 'feature',
      title: 'Secret roadmap',
      author: 'octocat',
      files: { 'feature.txt': 'new\n' },
    });
    // acme (granted) queues the PR; mallory (not granted) tries everything on the same repository.
    const queued = await s.post('/v1/submitPullRequest', {
      repo: GH_REPO,
      targetBranch: 'main',
      pr: { number },
    });
    expect(queued.statusCode, queued.body).toBe(200);
    const mallory = await s.t.token('mallory');
    const as = (url: string, body: object) => s!.t.post(url, body, mallory);
    const pr = { repo: GH_REPO, targetBranch: 'main', pr: { number } };
    const attempts = [
      await as('/v1/createQueue', { repo: GH_REPO, targetBranch: 'main' }),
      await as('/v1/submitPullRequest', pr),
      await as('/v1/getQueue', { repo: GH_REPO, targetBranch: 'main' }),
      await as('/v1/getSubmittedPullRequest', pr),
      await as('/v1/listPullRequests', { repo: GH_REPO, targetBranch: 'main' }),
      await as('/v1/metrics/createBundleUpload', { repo: GH_REPO, orgUrlSlug: 'mallory' }),
      await upload(s.t, mallory, [{ name: 'junit', content: junitXml([{ name: 't1' }]) }], {
        repo: GH_REPO,
        org: 'mallory',
      }),
    ];
    for (const res of attempts) {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error.code).toBe('FORBIDDEN');
      expect(res.json().error.message).toContain('mainline github grant --org mallory --owner acme');
      expect(res.body).not.toContain('Secret roadmap');
    }
    // Nothing was made on GitHub for mallory: no second queue's test branches, no draft PRs.
    expect(s.sim.requestsTo('POST', `/repos/${owner}/${name}/pulls`)).toHaveLength(0);
    // A repository on another host is only a label: uploads for it are mallory's business.
    const elsewhere = await upload(s.t, mallory, [{ name: 'junit', content: junitXml([{ name: 't1' }]) }], {
      repo: GITLAB,
      org: 'mallory',
    });
    expect(elsewhere.statusCode, elsewhere.body).toBe(200);
    // The granted organization reads its queue as before.
    const own = await s.post('/v1/getQueue', { repo: GH_REPO, targetBranch: 'main' });
    expect(own.statusCode, own.body).toBe(200);
  });

  it('a queue whose grant was taken away neither answers nor acts on GitHub until granted again', async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off' });
    const number = await s.sim.openPullRequest(owner, name, {
      head: 'feature',
      title: 'Add feature',
      files: { 'feature.txt': 'new\n' },
    });
    const pr = { repo: GH_REPO, targetBranch: 'main', pr: { number } };
    expect((await s.post('/v1/submitPullRequest', pr)).statusCode).toBe(200);
    const db = s.t.db.database.db;
    await revokeOwner(db, { orgSlug: 'acme', host: 'github.com', owner });
    const res = await s.post('/v1/getSubmittedPullRequest', pr);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().error.message).toContain('mainline github grant --org acme --owner acme');
    // The runner's passes reach GitHub through the same grant: it is not called at all.
    const calls = () => s!.sim.requests.length;
    const before = calls();
    for (let i = 0; i < 5; i++) {
      s.clock += 60_000;
      await s.runner.runOnce();
    }
    expect(calls()).toBe(before);
    // Granted again, the organization works as before.
    await grantOwner(db, { orgSlug: 'acme', host: 'github.com', owner, now: s.clock });
    expect((await s.post('/v1/getSubmittedPullRequest', pr)).statusCode).toBe(200);
  });

  it('an owner belongs to one organization: granting it to a second one is refused', async () => {
    s = await GitHubScenario.create();
    await s.t.token('mallory');
    await expect(
      grantOwner(s.t.db.database.db, { orgSlug: 'mallory', host: 'github.com', owner: 'ACME', now: s.clock }),
    ).rejects.toThrow(/granted to organization "acme".*mainline github revoke --org acme --owner ACME/);
  });

  it.each(['token', 'app'] as const)(
    "a webhook reaches only the granted organization, not another one's same-named repository (%s auth)",
    async (auth) => {
      s = await GitHubScenario.create({ directMergeMode: 'off' }, { auth, ungranted: true });
      const db = s.t.db.database.db;
      // Before grants existed mallory made a queue on acme/widgets; then the operator set things right.
      const mallory = await s.t.token('mallory');
      await grantOwner(db, { orgSlug: 'mallory', host: 'github.com', owner, now: s.clock });
      const made = await s.t.post('/v1/createQueue', { repo: GH_REPO, targetBranch: 'main' }, mallory);
      expect(made.statusCode, made.body).toBe(200);
      await revokeOwner(db, { orgSlug: 'mallory', host: 'github.com', owner });
      await grantOwner(db, {
        orgSlug: 'acme',
        host: 'github.com',
        owner,
        now: s.clock,
        ...(auth === 'app' ? { installationId: s.sim.installationId(owner) } : {}),
      });
      const created = await s.post('/v1/createQueue', { repo: GH_REPO, targetBranch: 'main' });
      expect(created.statusCode, created.body).toBe(200);

      const number = await s.sim.openPullRequest(owner, name, {
        head: 'feature',
        title: 'Add feature',
        author: 'octocat',
        files: { 'feature.txt': 'new\n' },
      });
      await s.sim.comment(owner, name, number, '/mainline merge', 'octocat');
      await s.deliver();
      expect(await queuedPrs(s, 'acme')).toEqual([number]);
      expect(await queuedPrs(s, 'mallory')).toEqual([]);
    },
  );
});

describe('commands from PR comments act only for users with write access', () => {
  let s: GitHubScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it.each([
    { who: 'passer-by', role: 'none' as const, says: /author association NONE/, asksGitHub: false },
    { who: 'reader', role: 'read' as const, says: /has read access/, asksGitHub: true },
  ])(
    '/mainline merge from a $role user ($who) changes nothing and says why',
    async ({ who, role, says, asksGitHub }) => {
      s = await GitHubScenario.create({ directMergeMode: 'off' });
      s.sim.setPermission(owner, name, who, role);
      const number = await s.sim.openPullRequest(owner, name, {
        head: 'feature',
        title: 'Add feature',
        author: who,
        files: { 'feature.txt': 'new\n' },
      });
      await s.sim.comment(owner, name, number, '/mainline merge', who);
      await s.deliver();
      await s.sim.flush();
      const res = await s.post('/v1/getSubmittedPullRequest', {
        repo: GH_REPO,
        targetBranch: 'main',
        pr: { number },
      });
      expect(res.statusCode, res.body).toBe(404);
      const refusal = s.sim
        .comments(owner, name, number)
        .find((c) => c.body.includes('/mainline merge was refused'));
      expect(refusal?.body).toMatch(says);
      expect(refusal?.body).toContain(`@${who}`);
      const asked = s.sim.requestsTo('GET', `/repos/${owner}/${name}/collaborators/${who}/permission`);
      expect(asked.length > 0).toBe(asksGitHub);
    },
  );

  it("a writer's /mainline merge submits the PR; the answer is remembered for a minute", async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off' });
    s.sim.setPermission(owner, name, 'maintainer', 'maintain');
    const first = await s.sim.openPullRequest(owner, name, {
      head: 'one',
      title: 'One',
      files: { 'a.txt': 'a\n' },
    });
    const second = await s.sim.openPullRequest(owner, name, {
      head: 'two',
      title: 'Two',
      files: { 'b.txt': 'b\n' },
    });
    await s.sim.comment(owner, name, first, '/mainline merge', 'maintainer');
    await s.sim.comment(owner, name, second, '/mainline merge', 'maintainer');
    await s.deliver();
    for (const number of [first, second]) {
      const res = await s.post('/v1/getSubmittedPullRequest', {
        repo: GH_REPO,
        targetBranch: 'main',
        pr: { number },
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    expect(
      s.sim.requestsTo('GET', `/repos/${owner}/${name}/collaborators/maintainer/permission`),
    ).toHaveLength(1);
  });
});

describe('mainline github: the operator grants accounts', () => {
  let db: TestDatabase;
  let sim: GitHubSimulator | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await sim?.close();
    await db.cleanup();
  });

  it('grant, list and revoke an owner; an owner another organization holds is refused', async () => {
    for (const org of ['acme', 'globex'])
      await createToken(db.database.db, { orgSlug: org, name: 'ci', now: Date.now() });
    const granted = await runCli(['github', 'grant', '--org', 'acme', '--owner', 'Acme-Inc'], db.env);
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.stderr).toContain('organization "acme" may act on github.com/Acme-Inc');
    const taken = await runCli(['github', 'grant', '--org', 'globex', '--owner', 'acme-inc'], db.env);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('mainline github revoke --org acme --owner acme-inc');
    const listed = await runCli(['github', 'list', '--json'], db.env);
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { org: 'acme', host: 'github.com', owner: 'Acme-Inc', installationId: null },
    ]);
    expect((await runCli(['github', 'revoke', '--org', 'acme', '--owner', 'acme-inc'], db.env)).code).toBe(0);
    expect(await listForgeGrants(db.database.db)).toEqual([]);
  }, 180_000);

  it('connect asks the GitHub App which account an installation is on and grants it', async () => {
    const keys = generateAppKeyPair();
    sim = await startGitHubSimulator({ webhookSecret: 'x', app: { id: 77, publicKey: keys.publicKey } });
    await sim.createRepo('initech', 'tps', { defaultBranch: 'main', files: { 'README.md': 'hi\n' } });
    const env = {
      ...db.env,
      MAINLINE_GITHUB_APP_ID: '77',
      MAINLINE_GITHUB_PRIVATE_KEY: keys.privateKeyPkcs1,
      MAINLINE_GITHUB_API_URL: sim.url,
      MAINLINE_GITHUB_HOST: 'github.com',
    };
    await createToken(db.database.db, { orgSlug: 'initech', name: 'ci', now: Date.now() });
    const id = sim.installationId('initech');
    const res = await runCli(['github', 'connect', '--org', 'initech', '--installation', String(id)], env);
    expect(res.code, res.stderr).toBe(0);
    const listed = JSON.parse(
      (await runCli(['github', 'list', '--org', 'initech', '--json'], db.env)).stdout,
    );
    expect(listed).toMatchObject([{ org: 'initech', owner: 'initech', installationId: id }]);
    const unknown = await runCli(['github', 'connect', '--org', 'initech', '--installation', '999999'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('has no installation 999999');
  }, 180_000);
});
