import { describe, expect, it } from 'vitest';
import { bareGit, commitOn, fileAt, history, lines, treePaths } from '../support/git-fixture.ts';
import { useGitFixture } from '../support/use-git-fixture.ts';

const fx = useGitFixture();

function main(): string {
  return bareGit(fx, ['rev-parse', 'refs/heads/main']);
}

describe('buildTestBranch', () => {
  it('merges one PR on top of the base and points the branch at the result', async () => {
    const base = main();
    const pr = commitOn(fx, 'feature/one', { 'a.txt': lines('a', { 2: 'A2' }) }, 'change a');
    const result = await fx.forge.buildTestBranch(fx.repo, {
      testBranch: 'trunk-merge/pr-1/run-1',
      baseSha: base,
      prHeads: [{ number: 1, sha: pr }],
    });
    if (!result.ok) throw new Error(result.reason);
    expect(bareGit(fx, ['rev-parse', 'refs/heads/trunk-merge/pr-1/run-1'])).toBe(result.sha);
    expect(history(fx, result.sha)).toEqual([
      { subject: 'Merge pull request #1 into trunk-merge/pr-1/run-1', parents: [base, pr] },
      { subject: 'initial', parents: [] },
    ]);
    expect(fileAt(fx, result.sha, 'a.txt')).toBe(lines('a', { 2: 'A2' }));
    expect(main()).toBe(base);
  });

  it('merges three PRs in order and the tree holds every change', async () => {
    const base = main();
    const p1 = commitOn(fx, 'pr1', { 'a.txt': lines('a', { 1: 'A1' }) }, 'one');
    const p2 = commitOn(fx, 'pr2', { 'b.txt': lines('b', { 5: 'B5' }), 'new/two.txt': 'two\n' }, 'two');
    const p3 = commitOn(fx, 'pr3', { 'a.txt': lines('a', { 9: 'A9' }), 'c.txt': null }, 'three');
    const result = await fx.forge.buildTestBranch(fx.repo, {
      testBranch: 'trunk-merge/pr-3/run-2',
      baseSha: base,
      prHeads: [
        { number: 1, sha: p1 },
        { number: 2, sha: p2 },
        { number: 3, sha: p3 },
      ],
      message: 'Test',
    });
    if (!result.ok) throw new Error(result.reason);
    const log = history(fx, result.sha);
    expect(log.map((c) => c.subject)).toEqual([
      'Test #3 into trunk-merge/pr-3/run-2',
      'Test #2 into trunk-merge/pr-3/run-2',
      'Test #1 into trunk-merge/pr-3/run-2',
      'initial',
    ]);
    expect(log[0]?.parents[1]).toBe(p3);
    expect(log[1]?.parents[1]).toBe(p2);
    expect(log[2]?.parents).toEqual([base, p1]);
    expect(fileAt(fx, result.sha, 'a.txt')).toBe(lines('a', { 1: 'A1', 9: 'A9' }));
    expect(fileAt(fx, result.sha, 'b.txt')).toBe(lines('b', { 5: 'B5' }));
    expect(treePaths(fx, result.sha)).toEqual(['a.txt', 'b.txt', 'new/two.txt']);
  });

  it('names the PR whose merge conflicts and the conflicting paths, and writes no branch', async () => {
    const base = main();
    const p1 = commitOn(
      fx,
      'pr1',
      { 'a.txt': lines('a', { 3: 'one' }), 'b.txt': lines('b', { 3: 'one' }) },
      '1',
    );
    const p2 = commitOn(fx, 'pr2', { 'c.txt': lines('c', { 1: 'two' }) }, '2');
    const p3 = commitOn(
      fx,
      'pr3',
      { 'a.txt': lines('a', { 3: 'three' }), 'b.txt': lines('b', { 3: 'x' }) },
      '3',
    );
    const result = await fx.forge.buildTestBranch(fx.repo, {
      testBranch: 'trunk-merge/conflict',
      baseSha: base,
      prHeads: [
        { number: 11, sha: p1 },
        { number: 12, sha: p2 },
        { number: 13, sha: p3 },
      ],
    });
    expect(result).toMatchObject({ ok: false, conflictPr: 13 });
    if (result.ok) return;
    expect(result.reason).toContain('a.txt, b.txt');
    expect(await fx.forge.head(fx.repo, 'trunk-merge/conflict')).toBeNull();
  });

  it('is deterministic: building the same inputs twice gives the same commit, and overwrites the branch', async () => {
    const base = main();
    const p1 = commitOn(fx, 'pr1', { 'a.txt': lines('a', { 1: 'A1' }) }, 'one');
    const p2 = commitOn(fx, 'pr2', { 'b.txt': lines('b', { 1: 'B1' }) }, 'two');
    const spec = {
      testBranch: 'trunk-merge/same',
      baseSha: base,
      prHeads: [
        { number: 1, sha: p1 },
        { number: 2, sha: p2 },
      ],
    };
    const first = await fx.forge.buildTestBranch(fx.repo, spec);
    const only1 = await fx.forge.buildTestBranch(fx.repo, { ...spec, prHeads: [{ number: 1, sha: p1 }] });
    expect(await fx.forge.head(fx.repo, 'trunk-merge/same')).toBe(only1.ok ? only1.sha : 'failed');
    const second = await fx.forge.buildTestBranch(fx.repo, spec);
    expect(first.ok && second.ok).toBe(true);
    expect(second).toEqual(first);
    expect(await fx.forge.head(fx.repo, 'trunk-merge/same')).toBe(first.ok ? first.sha : 'failed');
  });

  it('skips a PR already contained in the base', async () => {
    const p1 = commitOn(fx, 'pr1', { 'a.txt': lines('a', { 1: 'A1' }) }, 'one');
    bareGit(fx, ['update-ref', 'refs/heads/main', p1]);
    const result = await fx.forge.buildTestBranch(fx.repo, {
      testBranch: 'trunk-merge/contained',
      baseSha: p1,
      prHeads: [{ number: 1, sha: p1 }],
    });
    expect(result).toEqual({ ok: true, sha: p1 });
  });

  it('reports heads that are not in the repository without blaming a PR', async () => {
    const result = await fx.forge.buildTestBranch(fx.repo, {
      testBranch: 'trunk-merge/missing',
      baseSha: main(),
      prHeads: [{ number: 4, sha: 'f'.repeat(40) }],
    });
    expect(result).toMatchObject({ ok: false, conflictPr: null });
    expect(result.ok ? '' : result.reason).toContain('PR #4');
  });

  it('lists and deletes test branches by prefix', async () => {
    const base = main();
    for (const name of ['trunk-merge/a', 'trunk-merge/b', 'trunk-mergex', 'feature']) {
      const r = await fx.forge.buildTestBranch(fx.repo, { testBranch: name, baseSha: base, prHeads: [] });
      expect(r).toEqual({ ok: true, sha: base });
    }
    const listed = await fx.forge.listBranches(fx.repo, 'trunk-merge/');
    expect(listed).toEqual([
      { name: 'trunk-merge/a', sha: base },
      { name: 'trunk-merge/b', sha: base },
    ]);
    await fx.forge.deleteBranch(fx.repo, 'trunk-merge/a');
    await fx.forge.deleteBranch(fx.repo, 'trunk-merge/a');
    await fx.forge.deleteBranch(fx.repo, 'never-existed');
    expect((await fx.forge.listBranches(fx.repo, 'trunk-merge')).map((b) => b.name)).toEqual([
      'trunk-merge/b',
      'trunk-mergex',
    ]);
  });
});

describe('buildTestBranch concurrency', () => {
  it('builds several test branches on one bare repository at the same time', async () => {
    const base = main();
    const heads = [1, 2, 3, 4].map((n) => commitOn(fx, `pr${n}`, { [`f${n}.txt`]: `${n}\n` }, `pr ${n}`));
    const specs = heads.map((_, i) => ({
      testBranch: `trunk-merge/pr-${i + 1}/run`,
      baseSha: base,
      prHeads: heads.slice(0, i + 1).map((h, j) => ({ number: j + 1, sha: h })),
    }));
    const results = await Promise.all(specs.map((spec) => fx.forge.buildTestBranch(fx.repo, spec)));
    results.forEach((result, i) => {
      if (!result.ok) throw new Error(result.reason);
      expect(treePaths(fx, result.sha)).toEqual([
        'a.txt',
        'b.txt',
        'c.txt',
        ...heads.slice(0, i + 1).map((_, j) => `f${j + 1}.txt`),
      ]);
    });
    expect((await fx.forge.listBranches(fx.repo, 'trunk-merge/')).length).toBe(4);
  });
});
