import { describe, expect, it } from 'vitest';
import { type JudgedTest, judgeFailedRun } from '../../src/domain/flake-protection.ts';

const test = (name: string, over: Partial<JudgedTest> = {}): JudgedTest => ({
  testCaseId: `id-${name}`,
  name,
  failed: true,
  quarantined: false,
  status: 'HEALTHY',
  ...over,
});
const judge = (
  mode: 'off' | 'ignore_quarantined' | 'retry_flaky',
  tests: JudgedTest[],
  retriesSpent = 0,
  uploads = 1,
) => judgeFailedRun({ mode, tests, retriesSpent, uploads });

describe('judging a failed merge-queue run by its failed tests', () => {
  const quarantined = test('q', { quarantined: true, status: 'FLAKY' });
  const flaky = test('f', { status: 'FLAKY' });
  const healthy = test('h');
  const broken = test('b', { status: 'BROKEN' });

  it('with protection off the red status decides', () => {
    expect(judge('off', [quarantined]).kind).toBe('off');
  });

  it('ignores failures that are all in quarantined tests, in both protecting modes', () => {
    for (const mode of ['ignore_quarantined', 'retry_flaky'] as const) {
      const j = judge(mode, [quarantined, test('passed', { failed: false })]);
      expect(j).toMatchObject({ kind: 'ignore', tests: [quarantined] });
      expect(j.kind === 'ignore' && j.reason).toMatch(/only quarantined tests failed \(q\)/);
    }
  });

  it('retries once when only flaky (or quarantined) tests failed, then calls it a real failure', () => {
    expect(judge('retry_flaky', [flaky, quarantined])).toMatchObject({
      kind: 'retry',
      tests: [flaky, quarantined],
    });
    expect(judge('retry_flaky', [flaky], 1)).toMatchObject({
      kind: 'real_failure',
      reason: expect.stringMatching(/again after a retry/),
    });
    expect(judge('ignore_quarantined', [flaky])).toMatchObject({ kind: 'real_failure', tests: [flaky] });
  });

  it('any failure in a healthy or broken test is real in every mode', () => {
    for (const mode of ['ignore_quarantined', 'retry_flaky'] as const) {
      expect(judge(mode, [quarantined, healthy])).toMatchObject({ kind: 'real_failure', tests: [healthy] });
      expect(judge(mode, [flaky, broken])).toMatchObject({ kind: 'real_failure' });
    }
  });

  it('no uploaded results, or no failed test in them, is a real failure', () => {
    expect(judge('retry_flaky', [], 0, 0).kind).toBe('no_results');
    expect(judge('ignore_quarantined', [test('ok', { failed: false })])).toMatchObject({
      kind: 'real_failure',
      tests: [],
    });
  });
});
