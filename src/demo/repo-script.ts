/**
 * The demo repository ("shop"): its history on main and the pull requests the demo opens, with what
 * each is expected to do in the merge queue. Changes with an effect on the synthetic test suite are
 * recognised by the local CI from the files a commit changes (EFFECT_PATHS).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { authorEnv, type GitPerson, git } from './git.ts';
import { BROKEN_TEST_NAME, type Effect, FLAKY_TEST_NAME, SUITE } from './test-suite.ts';

export type Files = Readonly<Record<string, string>>;

export const PEOPLE = {
  ada: { login: 'ada', name: 'Ada Lovelace' },
  grace: { login: 'grace', name: 'Grace Hopper' },
  linus: { login: 'linus', name: 'Linus Torvalds' },
  margaret: { login: 'margaret', name: 'Margaret Hamilton' },
  barbara: { login: 'barbara', name: 'Barbara Liskov' },
} as const satisfies Record<string, GitPerson>;

/** A change to these files has this effect on the test suite when it is under test. */
export const EFFECT_PATHS: ReadonlyMap<string, Effect> = new Map([
  ['src/search/suggest-cache.ts', 'flaky'],
  ['src/billing/rounding.ts', 'broken'],
]);

/** The test file's source: the suite's test names for that file (the CI reports them synthetically). */
function testFile(file: string): string {
  const lines = [`// Run by the demo's local CI, which reports these tests synthetically.`];
  let current = '';
  for (const t of SUITE.filter((s) => s.file === file)) {
    if (t.classname !== current) {
      if (current !== '') lines.push('});');
      lines.push(`describe('${t.classname}', () => {`);
      current = t.classname;
    }
    lines.push(`  it('${t.name}', () => {});`);
  }
  lines.push('});', '');
  return lines.join('\n');
}

/** A source file from its lines. */
const source = (...lines: string[]) => `${lines.join('\n')}\n`;

const limits = (mb: number) =>
  `# Upload limits, read by src/uploads/store.ts\nmax_upload_mb: ${mb}\nmax_files_per_upload: 20\n`;

const INVOICE = `export interface Line { amount: number; quantity: number }

export function total(lines: readonly Line[]): number {
  return Math.round(lines.reduce((sum, l) => sum + l.amount * l.quantity, 0) * 100) / 100;
}
`;

/** One commit on main before the demo starts; dated `daysAgo` before now. */
export interface HistoryCommit {
  readonly message: string;
  readonly author: GitPerson;
  readonly daysAgo: number;
  readonly files: Files;
}

export const HISTORY: readonly HistoryCommit[] = [
  {
    message: 'Initial commit: shop skeleton with sign-in',
    author: PEOPLE.ada,
    daysAgo: 4,
    files: {
      'README.md': '# shop\n\nA tiny web shop: the repository of `mainline demo`.\n',
      '.mainline.yaml': [
        "# Read by Mainline's merge queue from the head of the target branch.",
        'merge:',
        '  required_statuses: [test]',
        '  flake_protection: ignore_quarantined',
        '',
      ].join('\n'),
      'config/limits.yaml': limits(25),
      'src/auth/login.ts': source(
        'export function login(user: string, password: string): boolean {',
        '  return user.length > 0 && password.length > 0;',
        '}',
      ),
      'tests/auth.test.ts': testFile('tests/auth.test.ts'),
    },
  },
  {
    message: 'Add invoices and payments',
    author: PEOPLE.linus,
    daysAgo: 3,
    files: { 'src/billing/invoice.ts': INVOICE },
  },
  {
    message: 'Add product search with suggestions',
    author: PEOPLE.grace,
    daysAgo: 2,
    files: {
      'src/search/suggest.ts': source(
        'export function suggest(prefix: string, names: readonly string[]): string[] {',
        '  return names.filter((n) => n.startsWith(prefix)).slice(0, 8);',
        '}',
      ),
      'tests/search.test.ts': testFile('tests/search.test.ts'),
    },
  },
  {
    message: 'Add image uploads',
    author: PEOPLE.margaret,
    daysAgo: 0.25,
    files: {
      'src/uploads/store.ts': 'export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;\n',
      'tests/uploads.test.ts': testFile('tests/uploads.test.ts'),
    },
  },
  {
    message: 'Test invoices and payments',
    author: PEOPLE.linus,
    daysAgo: 0.1,
    files: { 'tests/billing.test.ts': testFile('tests/billing.test.ts') },
  },
];

/** What the queue should do with a PR, and why. */
export interface DemoPr {
  readonly number: number;
  readonly branch: string;
  readonly title: string;
  readonly author: GitPerson;
  readonly files: Files;
  /** The commit of main's history the PR's branch starts from, counted back from the tip (default 0). */
  readonly branchedBack?: number;
  readonly expected: 'merged' | 'failed';
  /** What the queue's reason for the final state must say. */
  readonly expectedReason?: RegExp;
  /** One line for the summary. */
  readonly story: string;
}

export const PULL_REQUESTS: readonly DemoPr[] = [
  {
    number: 1,
    branch: 'feature/login-rate-limit',
    title: 'Rate-limit failed sign-ins',
    author: PEOPLE.ada,
    files: {
      'src/auth/rate-limit.ts': 'export const MAX_FAILURES = 5;\nexport const LOCKOUT_MINUTES = 15;\n',
    },
    expected: 'merged',
    story: 'a clean change',
  },
  {
    number: 2,
    branch: 'feature/search-cache',
    title: 'Cache search suggestions',
    author: PEOPLE.grace,
    files: {
      'src/search/suggest-cache.ts': source(
        'const cache = new Map<string, string[]>();',
        '',
        'export function cached(prefix: string, compute: () => string[]): string[] {',
        '  // Races with the index refresh: a first lookup can miss.',
        '  const hit = cache.get(prefix) ?? compute();',
        '  cache.set(prefix, hit);',
        '  return hit;',
        '}',
      ),
    },
    expected: 'merged',
    story: `makes "${FLAKY_TEST_NAME}" flaky: it fails, then passes on the CI's retry`,
  },
  {
    number: 3,
    branch: 'feature/invoice-rounding',
    title: 'Round invoice lines before summing',
    author: PEOPLE.linus,
    files: {
      'src/billing/rounding.ts': 'export const cents = (amount: number) => Math.floor(amount * 100) / 100;\n',
      'src/billing/invoice.ts': INVOICE.replace(
        'export interface',
        "import { cents } from './rounding.ts';\n\nexport interface",
      ).replace('sum + l.amount * l.quantity', 'sum + cents(l.amount * l.quantity)'),
    },
    // Branched before main got the invoice tests: its own CI passes (the queue admits only PRs whose
    // own required checks passed); tested on top of main, it breaks them.
    branchedBack: 1,
    expected: 'failed',
    expectedReason: /required checks failed/,
    story: `passes its own CI, branched before main got the invoice tests; on top of main it breaks "${BROKEN_TEST_NAME}" on every attempt`,
  },
  {
    number: 4,
    branch: 'feature/raise-upload-limit',
    title: 'Raise the upload limit to 50 MB',
    author: PEOPLE.margaret,
    files: { 'config/limits.yaml': limits(50) },
    expected: 'merged',
    story: 'a clean change to config/limits.yaml',
  },
  {
    number: 5,
    branch: 'feature/lower-upload-limit',
    title: 'Lower the upload limit to 10 MB',
    author: PEOPLE.barbara,
    files: { 'config/limits.yaml': limits(10) },
    expected: 'failed',
    expectedReason: /conflict/i,
    story: 'changes the same line of config/limits.yaml as #4: a merge conflict once #4 is in',
  },
];

/** The developer's clone of the demo repository: commits, branches and pushes with the git CLI. */
export class Workspace {
  private constructor(readonly dir: string) {}

  /** A new working copy whose origin is the server's bare repository. */
  static async create(dir: string, remote: string): Promise<Workspace> {
    await fs.mkdir(dir, { recursive: true });
    await git(['init', '-q', '-b', 'main'], { cwd: dir });
    await git(['remote', 'add', 'origin', remote], { cwd: dir });
    return new Workspace(dir);
  }

  git(args: readonly string[], env?: Record<string, string>): Promise<string> {
    return git(args, { cwd: this.dir, ...(env ? { env } : {}) });
  }

  async commit(files: Files, message: string, author: GitPerson, date?: Date): Promise<string> {
    for (const [name, content] of Object.entries(files)) {
      const file = path.join(this.dir, name);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, content);
    }
    await this.git(['add', '-A']);
    await this.git(['commit', '-q', '-m', message], authorEnv(author, date));
    return (await this.git(['rev-parse', 'HEAD'])).trim();
  }

  /** Starts `branch` from the given commit (discarding any local work). */
  async checkout(branch: string, from: string): Promise<void> {
    await this.git(['checkout', '-q', '-B', branch, from]);
  }

  async push(branches: readonly string[]): Promise<void> {
    await this.git(['push', '-q', 'origin', ...branches.map((b) => `${b}:refs/heads/${b}`)]);
  }
}
