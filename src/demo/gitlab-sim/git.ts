import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const ZERO_SHA = '0000000000000000000000000000000000000000';

/** A bare repository driven with the git CLI in an isolated environment (no working tree). */
export class BareRepo {
  readonly gitDir: string;

  constructor(gitDir: string) {
    this.gitDir = gitDir;
  }

  run(
    args: string[],
    options: { input?: string; env?: Record<string, string>; okCodes?: number[] } = {},
  ): Promise<{ stdout: string; code: number }> {
    return new Promise((resolve, reject) => {
      const child = execFile(
        'git',
        args,
        {
          env: {
            PATH: process.env['PATH'] ?? '/usr/bin:/bin',
            HOME: tmpdir(),
            LC_ALL: 'C',
            GIT_DIR: this.gitDir,
            GIT_CONFIG_NOSYSTEM: '1',
            GIT_CONFIG_GLOBAL: '/dev/null',
            GIT_AUTHOR_NAME: 'Sim',
            GIT_AUTHOR_EMAIL: 'sim@gitlab.test',
            GIT_COMMITTER_NAME: 'GitLab',
            GIT_COMMITTER_EMAIL: 'gitlab@gitlab.test',
            ...options.env,
          },
          maxBuffer: 64 * 1024 * 1024,
        },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
          if (code === 0 || options.okCodes?.includes(code)) resolve({ stdout: String(stdout), code });
          else reject(new Error(`git ${args.join(' ')} failed (${code}): ${String(stderr)}`));
        },
      );
      if (options.input !== undefined) child.stdin?.end(options.input);
      else child.stdin?.end();
    });
  }

  async out(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<string> {
    return (await this.run(args, options)).stdout.trim();
  }

  async init(defaultBranch: string): Promise<void> {
    await this.run(['init', '--quiet', '--bare', `--initial-branch=${defaultBranch}`, this.gitDir]);
    // GitLab takes push options (ci.skip); a local remote refuses them unless told to.
    await this.run(['--git-dir', this.gitDir, 'config', 'receive.advertisePushOptions', 'true']);
  }

  /** The commit a ref points at, or null. */
  async resolve(ref: string): Promise<string | null> {
    const res = await this.run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], {
      okCodes: [1, 128],
    });
    return res.code === 0 ? res.stdout.trim() : null;
  }

  async branch(name: string): Promise<string | null> {
    return this.resolve(`refs/heads/${name}`);
  }

  /** Moves a ref from `old` (null: must not exist) to `sha`; false when it was elsewhere. */
  async cas(ref: string, sha: string, old: string | null): Promise<boolean> {
    const res = await this.run(['update-ref', ref, sha, old ?? ZERO_SHA], { okCodes: [1, 128] });
    return res.code === 0;
  }

  async setRef(ref: string, sha: string): Promise<void> {
    await this.run(['update-ref', ref, sha]);
  }

  async deleteRef(ref: string): Promise<void> {
    await this.run(['update-ref', '-d', ref]);
  }

  async isAncestor(a: string, b: string): Promise<boolean> {
    return (await this.run(['merge-base', '--is-ancestor', a, b], { okCodes: [1] })).code === 0;
  }

  async mergeBase(a: string, b: string): Promise<string | null> {
    const res = await this.run(['merge-base', a, b], { okCodes: [1] });
    return res.code === 0 ? res.stdout.trim() : null;
  }

  async tree(sha: string): Promise<string> {
    return this.out(['rev-parse', `${sha}^{tree}`]);
  }

  /** The tree of merging b into a, or null on a conflict. */
  async mergeTree(a: string, b: string): Promise<string | null> {
    const res = await this.run(['merge-tree', '--write-tree', '--no-messages', a, b], { okCodes: [1] });
    return res.code === 0 ? (res.stdout.split('\n')[0] ?? '').trim() : null;
  }

  async commitTree(tree: string, parents: string[], message: string): Promise<string> {
    return this.out(['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message]);
  }

  /** A commit on top of parent (null: a root commit) with these files written (null deletes one). */
  async commitFiles(
    parent: string | null,
    files: Record<string, string | null>,
    message: string,
    author = 'Sim',
  ): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'gl-sim-index-'));
    const env = { GIT_INDEX_FILE: path.join(dir, 'index') };
    try {
      if (parent !== null) await this.run(['read-tree', parent], { env });
      for (const [file, content] of Object.entries(files)) {
        if (content === null) {
          await this.run(['update-index', '--force-remove', file], { env });
          continue;
        }
        const blob = await this.out(['hash-object', '-w', '--stdin'], { input: content });
        await this.run(['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`], { env });
      }
      const tree = await this.out(['write-tree'], { env });
      return this.out(['commit-tree', tree, ...(parent === null ? [] : ['-p', parent]), '-m', message], {
        env: { GIT_AUTHOR_NAME: author, GIT_AUTHOR_EMAIL: `${author}@users.gitlab.test` },
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async showFile(ref: string, file: string): Promise<string | null> {
    const res = await this.run(['show', `${ref}:${file}`], { okCodes: [128] });
    return res.code === 0 ? res.stdout : null;
  }

  /** Subjects on the first-parent line of a ref, newest first. */
  async log(ref: string): Promise<string[]> {
    const out = await this.out(['log', '--first-parent', '--format=%s', ref]);
    return out === '' ? [] : out.split('\n');
  }

  async parents(sha: string): Promise<string[]> {
    const out = await this.out(['rev-list', '--parents', '-n', '1', sha]);
    return out.split(' ').slice(1);
  }
}
