import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GitForge, type RepoId } from '../../src/forge/git/index.ts';

/** A bare repository served by a GitForge, plus a working clone that plays "the developers". */
export interface GitFixture {
  root: string;
  forge: GitForge;
  repo: RepoId;
  bare: string;
  work: string;
  cleanup(): void;
}

export interface Author {
  name: string;
  email: string;
}

const DEV: Author = { name: 'Dev Eloper', email: 'dev@example.com' };

/** The environment git runs in: no system or user configuration, `author` as author and committer. */
export function gitEnv(author: Author): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'],
    HOME: tmpdir(),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: author.name,
    GIT_COMMITTER_EMAIL: author.email,
  };
}

/** Run git in cwd (the working clone, or a bare repository via --git-dir). */
export function sh(cwd: string, args: string[], author: Author = DEV): string {
  return execFileSync('git', args, { cwd, env: gitEnv(author), encoding: 'utf8', stdio: 'pipe' }).replace(
    /\n$/,
    '',
  );
}

/** Run git against the bare repository. */
export function bareGit(fx: GitFixture, args: string[]): string {
  return sh(fx.root, [`--git-dir=${fx.bare}`, ...args]);
}

/** A new forge root with owner/repo created and main holding one commit ("initial": a.txt, b.txt, c.txt). */
export async function createFixture(): Promise<GitFixture> {
  const root = mkdtempSync(join(tmpdir(), 'mainline-forge-git-'));
  const forge = new GitForge({ root: join(root, 'repos') });
  const repo: RepoId = { host: 'git.local', owner: 'acme', name: 'widgets' };
  const bare = await forge.ensureRepository(repo);
  const work = join(root, 'work');
  sh(root, ['clone', '--quiet', bare, work]);
  const fx = { root, forge, repo, bare, work, cleanup: () => rmSync(root, { recursive: true, force: true }) };
  commitOn(fx, 'main', { 'a.txt': lines('a'), 'b.txt': lines('b'), 'c.txt': lines('c') }, 'initial', {
    orphan: true,
  });
  return fx;
}

/** Ten numbered lines "<p>1".."<p>10", so edits to different lines merge cleanly. */
export function lines(prefix: string, edits: Record<number, string> = {}): string {
  return Array.from({ length: 10 }, (_, i) => edits[i + 1] ?? `${prefix}${i + 1}`).join('\n') + '\n';
}

export interface CommitOptions {
  /** Branch to start from when `branch` does not exist yet in the bare repository (default main). */
  from?: string;
  author?: Author;
  orphan?: boolean;
}

/** Commit files (null deletes) on branch, starting from its current tip in the bare repository, and push it. */
export function commitOn(
  fx: GitFixture,
  branch: string,
  files: Record<string, string | null>,
  message: string,
  opts: CommitOptions = {},
): string {
  const w = fx.work;
  if (opts.orphan) sh(w, ['checkout', '--quiet', '--orphan', branch]);
  else {
    sh(w, ['fetch', '--quiet', 'origin', '+refs/heads/*:refs/remotes/origin/*']);
    const exists = sh(w, ['branch', '-r', '--list', `origin/${branch}`]) !== '';
    sh(w, ['checkout', '--quiet', '-B', branch, `origin/${exists ? branch : (opts.from ?? 'main')}`]);
  }
  for (const [path, content] of Object.entries(files)) {
    if (content === null) sh(w, ['rm', '--quiet', path]);
    else {
      mkdirSync(dirname(join(w, path)), { recursive: true });
      writeFileSync(join(w, path), content);
      sh(w, ['add', path]);
    }
  }
  sh(w, ['commit', '--quiet', '--allow-empty', '-m', message], opts.author ?? DEV);
  sh(w, ['push', '--quiet', '--force', 'origin', `HEAD:refs/heads/${branch}`]);
  return sh(w, ['rev-parse', 'HEAD']);
}

/** `git log --first-parent --format=%s%n%P` of a ref as [{subject, parents}], newest first. */
export function history(fx: GitFixture, ref: string): { subject: string; parents: string[] }[] {
  const out = bareGit(fx, ['log', '--first-parent', '--format=%s%x00%P', ref]);
  return out.split('\n').map((line) => {
    const [subject = '', parents = ''] = line.split('\0');
    return { subject, parents: parents === '' ? [] : parents.split(' ') };
  });
}

/** Content of path at commit, or null when absent. */
export function fileAt(fx: GitFixture, sha: string, path: string): string | null {
  try {
    return bareGit(fx, ['cat-file', 'blob', `${sha}:${path}`]) + '\n';
  } catch {
    return null;
  }
}

/** Every path in the tree of commit. */
export function treePaths(fx: GitFixture, sha: string): string[] {
  return bareGit(fx, ['ls-tree', '-r', '--name-only', sha]).split('\n');
}

/** Writes the files into a work tree and commits them all (`git` runs a git command there). */
export function commitFiles(
  work: string,
  git: (...args: string[]) => unknown,
  files: Record<string, string>,
  message: string,
): void {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(work, name)), { recursive: true });
    writeFileSync(join(work, name), content);
  }
  git('add', '-A');
  git('commit', '-q', '-m', message);
}
