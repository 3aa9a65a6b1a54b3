import { describe, expect, it } from 'vitest';
import { matchingRule, ownersFor, parseCodeowners } from '../../src/domain/codeowners/index.ts';

// Our own file in the spirit of GitHub's documented example: each rule shows one matching rule.
const EXAMPLE = `# Each line is a file pattern followed by one or more owners.

# Default owners for everything, unless a later match takes precedence.
*                     @acme/everyone

# The last matching pattern wins: TypeScript files belong to the front end only.
*.ts                  @acme/frontend #This is an inline comment.

# Email addresses work too.
*.go                  go-team@acme.dev

# Anchored at the root: infra/terraform and everything below it.
/infra/terraform/     @acme/platform @kim

# Direct children of docs only, not files in its subdirectories.
docs/*                @acme/writers

# Any apps directory anywhere in the repository.
apps/                 @acme/apps

# Any logs directory (or file called logs) at any depth.
**/logs               @acme/sre

# Owners left empty: nobody owns apps/legacy at the root.
/apps/legacy
`;

const { rules, problems } = parseCodeowners(EXAMPLE);

describe('parseCodeowners', () => {
  it('reads every rule with its line, pattern and owners, skipping comments and blank lines', () => {
    expect(rules.map(({ line, pattern, owners }) => ({ line, pattern, owners }))).toEqual([
      { line: 4, pattern: '*', owners: ['@acme/everyone'] },
      { line: 7, pattern: '*.ts', owners: ['@acme/frontend'] },
      { line: 10, pattern: '*.go', owners: ['go-team@acme.dev'] },
      { line: 13, pattern: '/infra/terraform/', owners: ['@acme/platform', '@kim'] },
      { line: 16, pattern: 'docs/*', owners: ['@acme/writers'] },
      { line: 19, pattern: 'apps/', owners: ['@acme/apps'] },
      { line: 22, pattern: '**/logs', owners: ['@acme/sre'] },
      { line: 25, pattern: '/apps/legacy', owners: [] },
    ]);
    expect(problems).toEqual([]);
  });

  it('reports and skips lines GitHub would reject, keeping the others', () => {
    const parsed = parseCodeowners(
      [
        '*.md @docs',
        '!secret.md @nobody',
        '[Backend] @acme/backend',
        'src/[ab].ts @x',
        'lib/ owner-without-at',
        '/ @root',
      ].join('\n'),
    );
    expect(parsed.rules.map((rule) => rule.pattern)).toEqual(['*.md']);
    expect(parsed.problems).toEqual([
      {
        line: 2,
        text: '!secret.md @nobody',
        message: 'Negated patterns (!) are not supported in CODEOWNERS',
      },
      { line: 3, text: '[Backend] @acme/backend', message: 'GitLab section headers are not supported' },
      { line: 4, text: 'src/[ab].ts @x', message: 'Character ranges ([ ]) are not supported in CODEOWNERS' },
      {
        line: 5,
        text: 'lib/ owner-without-at',
        message: '"owner-without-at" is not an owner: expected @user, @org/team or an email address',
      },
      { line: 6, text: '/ @root', message: 'The pattern matches no file' },
    ]);
  });

  it('reads an escaped # as part of the pattern and tolerates Windows line endings', () => {
    const parsed = parseCodeowners('\\#notes.md @writer\r\n*.rs @rustacean\r\n');
    expect(parsed.rules.map(({ pattern, owners }) => [pattern, owners])).toEqual([
      ['#notes.md', ['@writer']],
      ['*.rs', ['@rustacean']],
    ]);
    expect(ownersFor(parsed.rules, 'docs/#notes.md')).toEqual(['@writer']);
  });
});

describe('ownersFor', () => {
  it.each([
    ['README.md', ['@acme/everyone']],
    ['src/server/index.ts', ['@acme/frontend']],
    ['cmd/server/main.go', ['go-team@acme.dev']],
    ['infra/terraform/main.tf', ['@acme/platform', '@kim']],
    ['infra/terraform/modules/vpc/main.tf', ['@acme/platform', '@kim']],
    ['docs/getting-started.md', ['@acme/writers']],
    ['docs/api.ts', ['@acme/writers']],
    ['apps/web/index.html', ['@acme/apps']],
    ['services/billing/apps/worker.py', ['@acme/apps']],
    ['build/logs/today.log', ['@acme/sre']],
    ['deeply/nested/logs/x/y.txt', ['@acme/sre']],
    ['logs', ['@acme/sre']],
  ])('gives %s to %j', (path, owners) => {
    expect(ownersFor(rules, path)).toEqual(owners);
  });

  it('lets the last matching rule win over earlier ones', () => {
    expect(matchingRule(rules, 'docs/api.ts')?.line).toBe(16);
    expect(matchingRule(rules, 'apps/web/page.ts')?.line).toBe(19);
  });

  it('does not let * cross a directory in a pattern with a slash', () => {
    expect(ownersFor(rules, 'docs/build-app/troubleshooting.md')).toEqual(['@acme/everyone']);
    const parsed = parseCodeowners('src/*.ts @direct');
    expect(ownersFor(parsed.rules, 'src/a.ts')).toEqual(['@direct']);
    expect(ownersFor(parsed.rules, 'src/lib/a.ts')).toEqual([]);
  });

  it('anchors a pattern with a leading slash or an inner slash at the root', () => {
    expect(ownersFor(rules, 'modules/infra/terraform/main.tf')).toEqual(['@acme/everyone']);
    expect(ownersFor(rules, 'guide/docs/intro.md')).toEqual(['@acme/everyone']);
  });

  it('matches a trailing-slash pattern only inside a directory, not a file of that name', () => {
    expect(ownersFor(rules, 'apps')).toEqual(['@acme/everyone']);
  });

  it('un-owns paths whose last matching rule has no owners', () => {
    expect(ownersFor(rules, 'apps/legacy/old.ts')).toEqual([]);
    expect(ownersFor(rules, 'apps/legacyish/new.ts')).toEqual(['@acme/apps']);
  });

  it('owns everything below a directory named by a plain pattern', () => {
    const parsed = parseCodeowners('packages/ui @ui\n/tools @tools');
    expect(ownersFor(parsed.rules, 'packages/ui/src/button/Button.tsx')).toEqual(['@ui']);
    expect(ownersFor(parsed.rules, 'tools/release.sh')).toEqual(['@tools']);
    expect(ownersFor(parsed.rules, 'lib/tools/x.sh')).toEqual([]);
  });

  it('supports ** for any number of directories and ? for one character', () => {
    const parsed = parseCodeowners('src/**/test_?.py @qa\n/**/fixtures/** @fixtures');
    expect(ownersFor(parsed.rules, 'src/test_a.py')).toEqual(['@qa']);
    expect(ownersFor(parsed.rules, 'src/a/b/test_b.py')).toEqual(['@qa']);
    expect(ownersFor(parsed.rules, 'src/a/test_ab.py')).toEqual([]);
    expect(ownersFor(parsed.rules, 'x/fixtures/data.json')).toEqual(['@fixtures']);
  });

  it('treats regular-expression characters in patterns literally', () => {
    const parsed = parseCodeowners('lib/a+b.(c).js @literal');
    expect(ownersFor(parsed.rules, 'lib/a+b.(c).js')).toEqual(['@literal']);
    expect(ownersFor(parsed.rules, 'lib/aabXcYjs')).toEqual([]);
  });

  it('ignores case, a leading ./ or /, and Windows separators in the test path', () => {
    expect(ownersFor(rules, 'SRC/Server/Index.TS')).toEqual(['@acme/frontend']);
    expect(ownersFor(rules, './src/index.ts')).toEqual(['@acme/frontend']);
    expect(ownersFor(rules, '/infra/terraform/main.tf')).toEqual(['@acme/platform', '@kim']);
    expect(ownersFor(rules, 'infra\\terraform\\main.tf')).toEqual(['@acme/platform', '@kim']);
  });

  it('gives no owners without a file path or without a matching rule', () => {
    expect(ownersFor(rules, '')).toEqual([]);
    expect(ownersFor(parseCodeowners('*.md @docs').rules, 'src/a.ts')).toEqual([]);
  });
});
