import { describe, expect, it } from 'vitest';
import { parseMainlineConfig } from '../../src/forge/git/index.ts';
import { commitOn } from '../support/git-fixture.ts';
import { useGitFixture } from '../support/use-git-fixture.ts';

function statuses(source: string): string[] | null {
  const result = parseMainlineConfig(source);
  if (!result.ok) throw new Error(result.reason);
  return result.serviceConfig;
}

function reason(source: string): string {
  const result = parseMainlineConfig(source);
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.serviceConfig)}`);
  return result.reason;
}

describe('parseMainlineConfig', () => {
  it('reads merge.required_statuses', () => {
    expect(statuses('merge:\n  required_statuses:\n    - build\n    - test\n')).toEqual(['build', 'test']);
  });

  it('reads top-level required_statuses, items at the key indentation, quotes and comments', () => {
    const source = [
      '---',
      '# queue config',
      'version: 0.1   # ignored',
      'required_statuses:',
      '- build # the build',
      "- 'unit tests'",
      '- "lint: strict"',
      '- ci/e2e#1',
      '- build',
      '',
    ].join('\n');
    expect(statuses(source)).toEqual(['build', 'unit tests', 'lint: strict', 'ci/e2e#1']);
  });

  it('reads flow lists and ignores unrelated keys and nested blocks', () => {
    const source = [
      'lint:',
      '  enabled:',
      '    - { anything: [goes, here] }',
      'merge:',
      '  mode: parallel',
      '  required_statuses: [build, "test (ubuntu)", \'it\']',
      'other: |',
      '  text',
    ].join('\n');
    expect(statuses(source)).toEqual(['build', 'test (ubuntu)', 'it']);
    expect(statuses('merge:\n  required_statuses: []\n')).toEqual([]);
  });

  it('gives null when the key is absent or empty', () => {
    expect(statuses('')).toBeNull();
    expect(statuses('# nothing\n')).toBeNull();
    expect(statuses('merge:\n  mode: single\n')).toBeNull();
    expect(statuses('merge:\n')).toBeNull();
    expect(statuses('required_statuses:\n')).toBeNull();
  });

  it('reports what it cannot parse, with the line', () => {
    expect(reason('merge:\n  required_statuses: build\n')).toContain(
      'line 2: required_statuses must be a list',
    );
    expect(reason('merge:\n\trequired_statuses:\n')).toContain('line 2: tabs');
    expect(reason('merge:\n  required_statuses:\n    - name: build\n')).toContain(
      'line 3: unsupported value',
    );
    expect(reason('merge:\n  required_statuses:\n    - build\n      - nested\n')).toContain('line 4');
    expect(reason('merge:\n  required_statuses:\n    build\n')).toContain('line 3: expected a list item');
    expect(reason('merge: [a]\n')).toContain('merge must be a mapping');
    expect(reason('required_statuses: [a, "b]\n')).toContain('unterminated');
    expect(reason('required_statuses: [a]\nrequired_statuses: [b]\n')).toContain('duplicate key');
    expect(reason('required_statuses: [a]\nmerge:\n  required_statuses: [b]\n')).toContain('both');
    expect(reason('- build\n- test\n')).toContain('line 1: expected "key: value"');
    expect(reason('a: 1\n---\nb: 2\n')).toContain('one YAML document');
    expect(reason('required_statuses:\n  - *alias\n')).toContain('unsupported value');
  });
});

describe('readRequiredStatuses', () => {
  const fx = useGitFixture();

  it('reads .mainline.yaml at the head of the branch, null without a file or branch', async () => {
    expect(await fx.forge.readRequiredStatuses(fx.repo, 'main')).toEqual({
      ok: true,
      serviceConfig: null,
      flakeProtection: null,
    });
    expect(await fx.forge.readRequiredStatuses(fx.repo, 'nope')).toEqual({
      ok: true,
      serviceConfig: null,
      flakeProtection: null,
    });
    commitOn(
      fx,
      'main',
      { '.mainline.yaml': 'merge:\n  required_statuses:\n    - build\n    - test\n' },
      'cfg',
    );
    commitOn(fx, 'release', { '.mainline.yaml': 'required_statuses: [release]\n' }, 'cfg2');
    expect(await fx.forge.readRequiredStatuses(fx.repo, 'main')).toEqual({
      ok: true,
      serviceConfig: ['build', 'test'],
      flakeProtection: null,
    });
    expect(await fx.forge.readRequiredStatuses(fx.repo, 'release')).toEqual({
      ok: true,
      serviceConfig: ['release'],
      flakeProtection: null,
    });
  });

  it('reads merge.flake_protection, in any case, and refuses an unknown value', async () => {
    const parsed = parseMainlineConfig(
      'merge:\n  flake_protection: Retry_Flaky\n  required_statuses: [ci]\n',
    );
    expect(parsed).toEqual({ ok: true, serviceConfig: ['ci'], flakeProtection: 'retry_flaky' });
    const bad = parseMainlineConfig('merge:\n  flake_protection: sometimes\n');
    expect(bad).toMatchObject({
      ok: false,
      reason: expect.stringContaining('flake_protection must be one of off, ignore_quarantined, retry_flaky'),
    });
  });

  it('returns an error result for a broken file or a directory in its place', async () => {
    commitOn(fx, 'main', { '.mainline.yaml': 'merge:\n  required_statuses: build\n' }, 'broken');
    const broken = await fx.forge.readRequiredStatuses(fx.repo, 'main');
    expect(broken).toEqual({ ok: false, reason: '.mainline.yaml: line 2: required_statuses must be a list' });
    commitOn(fx, 'dir', { '.mainline.yaml': null, '.mainline.yaml/x': 'x\n' }, 'dir');
    expect(await fx.forge.readRequiredStatuses(fx.repo, 'dir')).toEqual({
      ok: false,
      reason: '.mainline.yaml is a tree, not a file',
    });
  });
});
