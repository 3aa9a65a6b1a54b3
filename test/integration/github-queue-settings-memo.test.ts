/**
 * getQueue on a GitHub repository remembers what the branch says about the queue (.mainline.yaml, branch
 * protection, rulesets) instead of asking GitHub three times per read; webhooks and a TTL drop the memo,
 * and the paths that decide merges (submitting a PR, the runner) still ask GitHub every time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GH_REPO, GitHubScenario } from '../support/github-scenario.ts';

const { owner, name } = GH_REPO;
const yaml = (mode: string) => `merge:\n  required_statuses: [ci]\n  flake_protection: ${mode}\n`;

describe('getQueue on GitHub remembers the branch settings', () => {
  let s: GitHubScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const getQueue = async (sc: GitHubScenario) => {
    const res = await sc.post('/v1/getQueue', { repo: GH_REPO, targetBranch: 'main' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { flakeProtection: string; requiredStatuses: string[] };
  };
  const calls = (sc: GitHubScenario) => sc.sim.requests.length;

  it('a repeated read asks GitHub nothing; a push of .mainline.yaml shows at once', async () => {
    s = await GitHubScenario.create(
      {},
      { files: { 'README.md': 'hi\n', '.mainline.yaml': yaml('retry_flaky') } },
    );
    expect((await getQueue(s)).flakeProtection).toBe('retry_flaky');
    const before = calls(s);
    expect((await getQueue(s)).flakeProtection).toBe('retry_flaky');
    expect(calls(s)).toBe(before);

    // The push webhook reaches Mainline before commit() returns: the next read asks GitHub again.
    await s.sim.commit(owner, name, 'main', { '.mainline.yaml': yaml('ignore_quarantined') });
    expect((await getQueue(s)).flakeProtection).toBe('ignore_quarantined');
    expect(calls(s)).toBeGreaterThan(before);
  });

  it('branch protection and ruleset webhooks (repository or owner) drop the memo; so does the TTL', async () => {
    s = await GitHubScenario.create(
      {},
      { files: { 'README.md': 'hi\n', '.mainline.yaml': yaml('retry_flaky') } },
    );
    const sc = s;
    await getQueue(sc);
    const repeatIsFree = async () => {
      const n = calls(sc);
      await getQueue(sc);
      return calls(sc) === n;
    };
    expect(await repeatIsFree()).toBe(true);
    const repository = { name, owner: { login: owner }, full_name: `${owner}/${name}` };
    await sc.sim.sendRaw('branch_protection_rule', { action: 'edited', repository });
    expect(await repeatIsFree()).toBe(false);
    expect(await repeatIsFree()).toBe(true);
    await sc.sim.sendRaw('repository_ruleset', { action: 'edited', organization: { login: owner } });
    expect(await repeatIsFree()).toBe(false);
    expect(await repeatIsFree()).toBe(true);
    // An event of another repository or branch, or one that changes no setting, keeps it.
    await sc.sim.sendRaw('branch_protection_rule', {
      action: 'edited',
      repository: { name: 'other', owner: { login: owner } },
    });
    await sc.sim.sendRaw('star', { action: 'created', repository });
    await sc.sim.commit(owner, name, 'feature', { 'feature.txt': 'new\n' }); // another branch's push
    expect(await repeatIsFree()).toBe(true);

    // A change another replica heard of (no webhook here) shows after the TTL (60 s by default).
    await sc.sim.commit(owner, name, 'main', { '.mainline.yaml': yaml('off') }); // webhook: memo dropped
    await getQueue(sc);
    sc.sim.setWebhookUrl('http://127.0.0.1:9/nowhere');
    await sc.sim.commit(owner, name, 'main', { '.mainline.yaml': yaml('retry_flaky') });
    sc.clock += 59_000;
    expect((await getQueue(sc)).flakeProtection).toBe('off');
    sc.clock += 2_000;
    expect((await getQueue(sc)).flakeProtection).toBe('retry_flaky');
  });

  it('submitting a PR reads branch protection afresh although getQueue remembers the branch', async () => {
    // No .mainline.yaml: the required statuses are branch protection's.
    s = await GitHubScenario.create({ directMergeMode: 'off' }, { files: { 'README.md': 'hi\n' } });
    const number = await s.sim.openPullRequest(owner, name, {
      head: 'feature',
      title: 'Add feature',
      files: { 'feature.txt': 'new\n' },
    });
    await s.sim.flush(); // its push webhook (which drops the memo) comes first
    await getQueue(s); // the memo now holds the branch unprotected
    // Protection changes and no webhook tells of it: getQueue's memo is stale, a merge decision must not be.
    s.sim.protectBranch(owner, name, 'main', { contexts: ['ci', 'lint'] });
    const warm = calls(s);
    await getQueue(s);
    expect(calls(s)).toBe(warm);
    const before = calls(s);
    const res = await s.post('/v1/submitPullRequest', {
      repo: GH_REPO,
      targetBranch: 'main',
      pr: { number },
    });
    expect(res.statusCode, res.body).toBe(200);
    const protectionReads = s.sim.requests
      .slice(before)
      .filter((r) => r.path.endsWith('/branches/main/protection/required_status_checks'));
    expect(protectionReads.length).toBeGreaterThan(0);
    expect((await getQueue(s)).requiredStatuses.sort()).toEqual(['ci', 'lint']);
  });
});
