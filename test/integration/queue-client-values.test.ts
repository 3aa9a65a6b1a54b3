import { afterEach, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { testingDetails } from '../support/queue-api.ts';

/** Values real Trunk clients send or expect on the merge-queue API, taken as they are on the wire. */
describe('merge-queue values of real clients', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('setImpactedTargets takes nx-action\'s "IMPACTS_ALL" as "ALL"; "ALL" and lists still work', async () => {
    s = await GitScenario.create({ directMergeMode: 'off', mode: 'parallel' });
    const sent: [number, string[] | string][] = [
      [1, 'IMPACTS_ALL'],
      [2, ['b']],
      [3, 'ALL'],
    ];
    for (const [n, impactedTargets] of sent) {
      await s.openPr(n, { [`f${n}.txt`]: `${n}\n` }, `Change ${n}`);
      const sha = s.bareGit('rev-parse', `feature-${n}`);
      // The body and headers trunk-io/nx-action's upload script sends: pr.number as a string, and an
      // empty fork run id next to the token.
      const res = await s.t.post(
        '/v1/setImpactedTargets',
        {
          repo: { host: 'github.com', owner: REPO.owner, name: REPO.name },
          pr: { number: String(n), sha },
          targetBranch: 'main',
          impactedTargets,
        },
        s.token,
        { 'x-forked-workflow-run-id': '' },
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({});
      await s.submit(n);
    }
    await s.settle();
    const runs = await s.runsInProgress();
    expect(runs.map((r) => r.tested)).toEqual([[1], [2], [3]]);
    const details = (i: number) => testingDetails(s!, REPO, runs[i]!.id);
    // Everything after an "everything" PR depends on it, whatever its own targets.
    expect(await details(0)).toMatchObject({ dependentPrs: [], impactedTargetsForTestedPrs: ['ALL'] });
    expect(await details(1)).toMatchObject({ dependentPrs: [1], impactedTargetsForTestedPrs: ['b'] });
    expect(await details(2)).toMatchObject({ dependentPrs: [1, 2], impactedTargetsForTestedPrs: ['ALL'] });
  });

  it('setImpactedTargets refuses other strings with a 400 that names the accepted ones', async () => {
    s = await GitScenario.create({ directMergeMode: 'off', mode: 'parallel' });
    const res = await s.post('/v1/setImpactedTargets', {
      repo: REPO,
      targetBranch: 'main',
      pr: { number: 1, sha: 'abc' },
      impactedTargets: 'EVERYTHING',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_FAILED');
    expect(JSON.stringify(res.json().error.details)).toContain('IMPACTS_ALL');
  });

  it('getMergeQueueTestingDetails lists a status reported as error as ERROR, a failure as FAILURE', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    const [run] = await s.runsInProgress();
    const report = async (context: string, state: string) => {
      const res = await s!.post('/v1/git/reportStatus', { repo: REPO, sha: run!.sha, context, state });
      expect(res.statusCode, res.body).toBe(200);
    };
    await report('lint', 'failure');
    await report('ci', 'error');
    const res = await s.post('/v1/getMergeQueueTestingDetails', {
      repo: REPO,
      targetBranch: 'main',
      testRunId: run!.id,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('failed');
    const states = Object.fromEntries(
      (res.json().statusChecks as { context: string; state: string }[]).map((c) => [c.context, c.state]),
    );
    expect(states).toEqual({ lint: 'FAILURE', ci: 'ERROR' });
    // An error fails the run exactly as a failure does.
    expect((await s.pr(1)).state).toBe('failed');
  });
});
