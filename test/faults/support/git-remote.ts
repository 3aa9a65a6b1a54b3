import { execFileSync } from 'node:child_process';
import { commitFiles, gitEnv as gitEnvOf } from '../../support/git-fixture.ts';
import { post200 } from './cluster.ts';

export interface RepoRef {
  readonly host: string;
  readonly owner: string;
  readonly name: string;
}

/** Environment for git commands: no user or system configuration, a fixed identity. */
const gitEnv = () => gitEnvOf({ name: 'Dev', email: 'dev@example.com' });

/**
 * A repository of the plain-git forge as its users see it: the server's bare repository (created
 * through /v1/git/createRepository), a working clone that pushes branches to it, and pull requests
 * registered over HTTP. Every call takes the server URL to use, so requests can go to any replica.
 */
export class GitRemote {
  readonly repo: RepoRef;
  readonly bare: string;
  readonly work: string;

  private constructor(repo: RepoRef, bare: string, work: string) {
    this.repo = repo;
    this.bare = bare;
    this.work = work;
  }

  /** Creates the bare repository through `url`, clones it into `workDir` and pushes an initial main. */
  static async create(url: string, repo: RepoRef, workDir: string): Promise<GitRemote> {
    const created = await post200(url, '/v1/git/createRepository', { repo });
    const bare = String(created.json.path);
    execFileSync('git', ['clone', '-q', bare, workDir], { env: gitEnv(), stdio: 'pipe' });
    const remote = new GitRemote(repo, bare, workDir);
    remote.git('checkout', '-q', '-b', 'main');
    remote.commit({ 'README.md': 'hello\n' }, 'Initial commit');
    remote.git('push', '-q', 'origin', 'main');
    return remote;
  }

  git(...args: string[]): string {
    return execFileSync('git', args, {
      cwd: this.work,
      env: gitEnv(),
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim();
  }

  /** A git command in the server's bare repository. */
  bareGit(...args: string[]): string {
    return execFileSync('git', ['--git-dir', this.bare, ...args], {
      env: gitEnv(),
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim();
  }

  commit(files: Record<string, string>, message: string): void {
    commitFiles(this.work, (...args) => this.git(...args), files, message);
  }

  /**
   * Pushes branch feature-n off the initial main with its own file and registers it as PR n; CI
   * reports `ci: success` on its head (the queue admits a PR only once its required checks passed).
   */
  async openPr(url: string, n: number): Promise<void> {
    this.git('checkout', '-q', 'main');
    this.git('checkout', '-q', '-B', `feature-${n}`);
    this.commit({ [`change-${n}.txt`]: `change ${n}\n` }, prTitle(n));
    this.git('push', '-q', '-f', 'origin', `feature-${n}`);
    this.git('checkout', '-q', 'main');
    await post200(url, '/v1/git/registerPullRequest', {
      repo: this.repo,
      number: n,
      title: prTitle(n),
      author: 'dev',
      headBranch: `feature-${n}`,
      baseBranch: 'main',
    });
    const sha = this.bareGit('rev-parse', `refs/heads/feature-${n}`);
    await post200(url, '/v1/git/reportStatus', { repo: this.repo, sha, context: 'ci', state: 'success' });
  }

  /** Subjects of main's first-parent history in the bare repository, newest first. */
  history(): string[] {
    return this.bareGit('log', '--first-parent', '--format=%s', 'main').split('\n');
  }

  /** Branches the queue pushed for test runs, with their heads. */
  testBranches(): { branch: string; sha: string }[] {
    const out = this.bareGit(
      'for-each-ref',
      '--format=%(refname:short) %(objectname)',
      'refs/heads/mainline-merge/',
    );
    return out === ''
      ? []
      : out.split('\n').map((line) => {
          const [branch = '', sha = ''] = line.split(' ');
          return { branch, sha };
        });
  }
}

export function prTitle(n: number): string {
  return `Change ${n}`;
}

/** The squash commit subject the queue writes for PR n. */
export function squashSubject(n: number): string {
  return `${prTitle(n)} (#${n})`;
}

/**
 * A CI system watching the bare repository: every test branch head it has not seen yet gets a
 * `ci: success` status, sent through whichever server `pickUrl` names. Network errors (a server
 * being killed) are forgotten and retried on the next pass.
 */
export class FakeCi {
  readonly #remote: GitRemote;
  readonly #reported = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #busy = false;
  /** How many statuses were accepted. */
  sent = 0;

  constructor(remote: GitRemote) {
    this.#remote = remote;
  }

  /** One pass: report success for each new test branch head; answers how many were sent. */
  async pass(pickUrl: () => string | undefined): Promise<number> {
    let count = 0;
    for (const { branch, sha } of this.#remote.testBranches()) {
      const key = `${branch}@${sha}`;
      if (this.#reported.has(key)) continue;
      const url = pickUrl();
      if (url === undefined) return count;
      try {
        await post200(url, '/v1/git/reportStatus', {
          repo: this.#remote.repo,
          sha,
          context: 'ci',
          state: 'success',
          url: `https://ci.example/${encodeURIComponent(branch)}`,
        });
        this.#reported.add(key);
        this.sent++;
        count++;
      } catch {
        // the server went away mid-request; the next pass reports it again
      }
    }
    return count;
  }

  /** Runs a pass every intervalMs until stopped. */
  start(pickUrl: () => string | undefined, intervalMs = 50): void {
    this.#timer = setInterval(() => {
      if (this.#busy) return;
      this.#busy = true;
      this.pass(pickUrl)
        .catch(() => undefined)
        .finally(() => {
          this.#busy = false;
        });
    }, intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    while (this.#busy) await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
