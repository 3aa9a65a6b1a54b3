import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const ZERO_SHA = '0000000000000000000000000000000000000000';
const SHA = /^[0-9a-f]{40}$/;
/** Fixed date of the throwaway commits a rebase uses as merge bases. */
const SCAFFOLD_DATE = '@0 +0000';

interface RunResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

interface RunOptions {
  okCodes?: number[];
  input?: string | Buffer;
  env?: Record<string, string>;
}

export interface Author {
  name: string;
  email: string;
  /** git's raw date ("@<seconds> +0000"); now when absent. */
  date?: string;
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  author: Author & { date: string };
  committer: Author & { date: string };
  message: string;
}

export type TreeMerge = { clean: true; tree: string } | { clean: false; conflicts: string[] };

export function isSha(value: string): boolean {
  return SHA.test(value);
}

/** Branch names the simulator accepts (a conservative subset of git's rules). */
export function isBranchName(name: string): boolean {
  return (
    /^[A-Za-z0-9._/+-]+$/.test(name) &&
    !name.startsWith('-') &&
    !name.startsWith('/') &&
    !name.endsWith('/') &&
    !name.endsWith('.lock') &&
    !name.includes('..') &&
    !name.includes('//') &&
    !name.split('/').some((part) => part.startsWith('.'))
  );
}

export function authorFor(login: string): Author {
  return { name: login, email: `${login}@users.noreply.github.com` };
}

function rawNow(): string {
  return `@${Math.floor(Date.now() / 1000)} +0000`;
}

/** A bare repository driven with the git CLI (argument arrays, isolated environment, no working tree). */
export class BareRepo {
  constructor(readonly dir: string) {}

  static async init(dir: string, defaultBranch: string): Promise<BareRepo> {
    const repo = new BareRepo(dir);
    await repo.run(['init', '-q', '--bare', `--initial-branch=${defaultBranch}`, dir], {}, false);
    return repo;
  }

  run(args: string[], opts: RunOptions = {}, withGitDir = true): Promise<RunResult> {
    const env: NodeJS.ProcessEnv = {
      GIT_AUTHOR_NAME: 'GitHub',
      GIT_AUTHOR_EMAIL: 'noreply@github.com',
      GIT_COMMITTER_NAME: 'GitHub',
      GIT_COMMITTER_EMAIL: 'noreply@github.com',
      ...opts.env,
      PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: tmpdir(),
      LC_ALL: 'C',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
    };
    if (withGitDir) env['GIT_DIR'] = this.dir;
    return new Promise((resolve, reject) => {
      const child = execFile(
        'git',
        args,
        { env, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          if (code === 0 || opts.okCodes?.includes(code)) {
            resolve({ stdout, stderr: stderr.toString('utf8'), code });
          } else {
            reject(new Error(`git ${args.join(' ')} failed (${code}): ${stderr.toString('utf8').trim()}`));
          }
        },
      );
      child.stdin?.on('error', () => {});
      child.stdin?.end(opts.input ?? '');
    });
  }

  async out(args: string[], opts: RunOptions = {}): Promise<string> {
    return (await this.run(args, opts)).stdout.toString('utf8').replace(/\n$/, '');
  }

  /** The commit a revision names (sha, refs/heads/x, x), or null. Refuses option-like input. */
  async resolve(rev: string): Promise<string | null> {
    if (rev === '' || rev.startsWith('-') || /[\s\0~^:?*[\\]/.test(rev)) return null;
    const result = await this.run(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], {
      okCodes: [1, 128],
    });
    return result.code === 0 ? result.stdout.toString('utf8').trim() : null;
  }

  /** Head of a branch, or null. */
  branch(name: string): Promise<string | null> {
    return isBranchName(name) ? this.resolve(`refs/heads/${name}`) : Promise.resolve(null);
  }

  /** A branch name, a `heads/x` or `refs/heads/x`, or a (full) sha → commit sha. Branches win over shas. */
  async resolveRef(ref: string): Promise<string | null> {
    const name = ref.replace(/^refs\/heads\//, '').replace(/^heads\//, '');
    const branch = await this.branch(name);
    if (branch !== null) return branch;
    return /^[0-9a-f]{7,40}$/.test(ref) ? this.resolve(ref) : null;
  }

  async branches(): Promise<Map<string, string>> {
    const out = await this.out(['for-each-ref', '--format=%(objectname) %(refname:strip=2)', 'refs/heads/']);
    const map = new Map<string, string>();
    for (const line of out.split('\n')) {
      const space = line.indexOf(' ');
      if (space > 0) map.set(line.slice(space + 1), line.slice(0, space));
    }
    return map;
  }

  /** A commit with files written over (string) or removed (null) from parent's tree. */
  async writeFiles(
    parent: string | null,
    files: Record<string, string | null>,
    message: string,
    author: Author,
  ): Promise<string> {
    const index = path.join(this.dir, `sim-index-${randomUUID()}`);
    const env = { GIT_INDEX_FILE: index };
    try {
      await this.run(parent === null ? ['read-tree', '--empty'] : ['read-tree', `${parent}^{tree}`], { env });
      const lines: string[] = [];
      for (const [file, content] of Object.entries(files)) {
        if (!isSafePath(file)) throw new Error(`unsafe path ${JSON.stringify(file)}`);
        if (content === null) {
          lines.push(`0 ${ZERO_SHA}\t${file}`);
        } else {
          const blob = await this.out(['hash-object', '-w', '--stdin'], { input: content });
          lines.push(`100644 ${blob}\t${file}`);
        }
      }
      await this.run(['update-index', '-z', '--index-info'], { env, input: lines.join('\0') + '\0' });
      const tree = await this.out(['write-tree'], { env });
      return this.commitTree(tree, parent === null ? [] : [parent], message, author);
    } finally {
      await rm(index, { force: true });
    }
  }

  async commitTree(tree: string, parents: string[], message: string, author?: Author): Promise<string> {
    const now = rawNow();
    const env: Record<string, string> = { GIT_COMMITTER_DATE: now, GIT_AUTHOR_DATE: author?.date ?? now };
    if (author) {
      env['GIT_AUTHOR_NAME'] = author.name;
      env['GIT_AUTHOR_EMAIL'] = author.email;
    }
    const args = ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'];
    return this.out(args, { env, input: message.endsWith('\n') ? message : `${message}\n` });
  }

  /** Three-way merge of theirs into ours (merge-tree --write-tree); unrelated histories count as a conflict. */
  async mergeTree(ours: string, theirs: string): Promise<TreeMerge> {
    const args = ['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', ours, theirs];
    const result = await this.run(args, { okCodes: [1, 128] });
    if (result.code === 128) return { clean: false, conflicts: [] };
    const fields = result.stdout.toString('utf8').split('\0');
    if (result.code === 0) return { clean: true, tree: fields[0] ?? '' };
    const end = fields.indexOf('', 1);
    return { clean: false, conflicts: [...new Set(fields.slice(1, end < 0 ? undefined : end))].sort() };
  }

  /** Compare-and-swap of refs/heads/name: old null means "must not exist", new null deletes. */
  async setBranch(name: string, next: string | null, old: string | null): Promise<boolean> {
    const ref = `refs/heads/${name}`;
    const args =
      next === null ? ['update-ref', '-d', ref, old ?? ZERO_SHA] : ['update-ref', ref, next, old ?? ZERO_SHA];
    return (await this.run(args, { okCodes: [1, 128] })).code === 0;
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    const result = await this.run(['merge-base', '--is-ancestor', ancestor, descendant], { okCodes: [1] });
    return result.code === 0;
  }

  async mergeBase(a: string, b: string): Promise<string | null> {
    const result = await this.run(['merge-base', a, b], { okCodes: [1] });
    return result.code === 0 ? result.stdout.toString('utf8').trim() : null;
  }

  /** Commits reachable from head but not base, oldest first: [sha, ...parents]. */
  async commitsBetween(base: string | null, head: string): Promise<string[][]> {
    const range = base === null ? [head] : [`${base}..${head}`];
    const out = await this.out(['rev-list', '--reverse', '--topo-order', '--parents', ...range, '--']);
    return out === '' ? [] : out.split('\n').map((line) => line.split(' '));
  }

  async commitInfo(sha: string): Promise<CommitInfo> {
    const format = '%H%x00%T%x00%P%x00%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd%x00%B';
    const out = await this.out(['show', '-s', '--date=raw', `--format=${format}`, sha, '--']);
    const [
      hash = '',
      tree = '',
      parents = '',
      an = '',
      ae = '',
      ad = '',
      cn = '',
      ce = '',
      cd = '',
      ...rest
    ] = out.split('\0');
    return {
      sha: hash,
      tree,
      parents: parents === '' ? [] : parents.split(' '),
      author: { name: an, email: ae, date: `@${ad}` },
      committer: { name: cn, email: ce, date: `@${cd}` },
      message: rest.join('\0').replace(/\n+$/, ''),
    };
  }

  /** The blob or tree at path in a commit. */
  async entry(
    commit: string,
    file: string,
  ): Promise<{ type: 'blob' | 'tree'; sha: string; content: Buffer } | null> {
    const spec = `${commit}:${file.replace(/^\/+|\/+$/g, '')}`;
    const found = await this.run(['rev-parse', '--verify', '--quiet', spec], { okCodes: [1, 128] });
    if (found.code !== 0) return null;
    const sha = found.stdout.toString('utf8').trim();
    const type = await this.out(['cat-file', '-t', sha]);
    if (type === 'tree') return { type, sha, content: (await this.run(['ls-tree', '-z', sha])).stdout };
    if (type !== 'blob') return null;
    return { type, sha, content: (await this.run(['cat-file', 'blob', sha])).stdout };
  }

  /**
   * Replays commits (oldest first, [sha, parent]) onto base, keeping authors and messages: a cherry-pick
   * without a working tree. git 2.39's merge-tree has no --merge-base, so each commit is merged into a
   * scaffold commit (current tree, parent = the commit's parent), whose merge base is exactly that parent.
   */
  async replay(base: string, commits: string[][]): Promise<{ ok: true; sha: string } | { ok: false }> {
    let current = base;
    let tree = (await this.commitInfo(base)).tree;
    for (const [sha, parent, ...more] of commits) {
      if (sha === undefined || parent === undefined || more.length > 0) return { ok: false };
      const scaffold = await this.commitTree(tree, [parent], 'scaffold', {
        ...authorFor('sim'),
        date: SCAFFOLD_DATE,
      });
      const merged = await this.mergeTree(scaffold, sha);
      if (!merged.clean) return { ok: false };
      if (merged.tree === tree) continue;
      const info = await this.commitInfo(sha);
      current = await this.commitTree(merged.tree, [current], info.message, info.author);
      tree = merged.tree;
    }
    return { ok: true, sha: current };
  }
}

/** A repository-relative path that git and the filesystem agree on. */
function isSafePath(file: string): boolean {
  return (
    file !== '' &&
    !file.startsWith('/') &&
    !file.startsWith('-') &&
    !/[\0\n\r\t]/.test(file) &&
    file.split('/').every((part) => part !== '' && part !== '.' && part !== '..' && part !== '.git')
  );
}
