// Reading a branch's position from the bare repository's ref files (no git process), checked against
// what `git rev-parse --verify` answers for the same ref in each layout git leaves behind.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRefValue } from '../../src/forge/git/ref-files.ts';
import { bareGit, commitOn } from '../support/git-fixture.ts';
import { useGitFixture } from '../support/use-git-fixture.ts';

describe('a branch read from the ref files', () => {
  const fx = useGitFixture();

  const git = (ref: string): string | null => {
    try {
      return bareGit(fx, ['rev-parse', '--verify', '--quiet', ref]);
    } catch {
      return null;
    }
  };
  const read = (ref: string) => readRefValue(fx.bare, ref);

  it('reads a loose ref', async () => {
    const sha = commitOn(fx, 'feature', { 'd.txt': 'd\n' }, 'd');
    expect(existsSync(join(fx.bare, 'refs/heads/feature'))).toBe(true);
    expect(await read('refs/heads/feature')).toBe(sha);
    expect(await fx.forge.tip(fx.repo, 'feature')).toBe(sha);
  });

  it('reads a packed ref once its loose file is gone', async () => {
    const sha = commitOn(fx, 'feature', { 'd.txt': 'd\n' }, 'd');
    bareGit(fx, ['pack-refs', '--all', '--prune']);
    expect(existsSync(join(fx.bare, 'refs/heads/feature'))).toBe(false);
    expect(await read('refs/heads/feature')).toBe(sha);
    expect(await read('refs/heads/main')).toBe(git('refs/heads/main'));
  });

  it('prefers the loose file of a ref moved after packing over its packed value', async () => {
    const old = commitOn(fx, 'main', { 'd.txt': 'd\n' }, 'd');
    bareGit(fx, ['pack-refs', '--all', '--prune']);
    const moved = commitOn(fx, 'main', { 'e.txt': 'e\n' }, 'e');
    expect(moved).not.toBe(old);
    expect(git('refs/heads/main')).toBe(moved);
    expect(await read('refs/heads/main')).toBe(moved);
    expect(await fx.forge.tip(fx.repo, 'main')).toBe(moved);
  });

  it('answers null for a missing branch, packed or not, and for one deleted after packing', async () => {
    expect(await read('refs/heads/nope')).toBeNull();
    expect(await fx.forge.tip(fx.repo, 'nope')).toBeNull();
    commitOn(fx, 'gone', { 'd.txt': 'd\n' }, 'd');
    bareGit(fx, ['pack-refs', '--all', '--prune']);
    bareGit(fx, ['update-ref', '-d', 'refs/heads/gone']);
    expect(git('refs/heads/gone')).toBeNull();
    expect(await read('refs/heads/gone')).toBeNull();
    // A prefix of a packed name is not that name.
    commitOn(fx, 'gone-too', { 'd.txt': 'd\n' }, 'd');
    bareGit(fx, ['pack-refs', '--all', '--prune']);
    expect(await read('refs/heads/gone')).toBeNull();
  });

  it('treats a folder of loose refs as no loose file and looks in packed-refs', async () => {
    const inner = commitOn(fx, 'team/x', { 'e.txt': 'e\n' }, 'e');
    expect(await read('refs/heads/team/x')).toBe(inner);
    expect(await read('refs/heads/team')).toBeNull();
    expect(git('refs/heads/team')).toBeNull();
  });

  it('follows symbolic refs, loose or to a packed target', async () => {
    const sha = git('refs/heads/main');
    bareGit(fx, ['pack-refs', '--all', '--prune']);
    bareGit(fx, ['symbolic-ref', 'refs/heads/alias', 'refs/heads/main']);
    expect(await read('refs/heads/alias')).toBe(sha);
    expect(await fx.forge.tip(fx.repo, 'alias')).toBe(git('refs/heads/alias'));
    bareGit(fx, ['symbolic-ref', 'refs/heads/dangling', 'refs/heads/nothing']);
    expect(git('refs/heads/dangling')).toBeNull();
    expect(await read('refs/heads/dangling')).toBeNull();
  });

  it('leaves a ref file git calls broken to git', async () => {
    writeFileSync(join(fx.bare, 'refs/heads/broken'), 'not an object id\n');
    expect(await read('refs/heads/broken')).toBeUndefined();
    expect(await fx.forge.tip(fx.repo, 'broken')).toBe(git('refs/heads/broken'));
  });
});
