import { describe, expect, it } from 'vitest';
import {
  FORK_RUN_MAX_AGE_MS,
  forkRunRefusal,
  parseRunId,
  type WorkflowRun,
} from '../../src/domain/fork-run.ts';

const NOW = Date.UTC(2026, 10, 2, 9);
const SHA = 'a'.repeat(40);
const RUN: WorkflowRun = {
  id: 42,
  event: 'pull_request',
  status: 'in_progress',
  headSha: SHA,
  repositoryFullName: 'acme/widgets',
  headRepositoryFullName: 'contributor/widgets',
  startedAt: NOW - 60_000,
};
const CLAIM = { repositoryFullName: 'acme/widgets', headSha: SHA };

describe('forkRunRefusal: when a fork PR run may stand in for a token', () => {
  it('accepts a fork pull_request run of the repository, in progress, recent, at the claimed head', () => {
    expect(forkRunRefusal(RUN, CLAIM, NOW)).toBeUndefined();
    // Names and SHAs compare without case; a queued run and one just inside the bound are fine.
    expect(
      forkRunRefusal(
        { ...RUN, repositoryFullName: 'ACME/Widgets', headSha: SHA.toUpperCase(), status: 'queued' },
        CLAIM,
        NOW,
      ),
    ).toBeUndefined();
    expect(forkRunRefusal({ ...RUN, startedAt: NOW - FORK_RUN_MAX_AGE_MS }, CLAIM, NOW)).toBeUndefined();
  });

  it.each([
    ['a run of another repository', { repositoryFullName: 'acme/other' }, /not a run of acme\/widgets/],
    ['a push run', { event: 'push' }, /"push" event/],
    ['a pull_request_target run', { event: 'pull_request_target' }, /"pull_request_target" event/],
    ['a run of the repository itself', { headRepositoryFullName: 'acme/widgets' }, /not from a fork/],
    ['a run with no head repository', { headRepositoryFullName: null }, /not from a fork/],
    ['a completed run', { status: 'completed' }, /has completed/],
    ['a run started too long ago', { startedAt: NOW - FORK_RUN_MAX_AGE_MS - 1 }, /more than 6 hours ago/],
    [
      'a run at another head',
      { headSha: 'b'.repeat(40) },
      /ran at b{40}, not at the pull request head a{40}/,
    ],
  ])('refuses %s', (_what, change, message) => {
    expect(forkRunRefusal({ ...RUN, ...change }, CLAIM, NOW)).toMatch(message);
  });

  it('reads a run id as GitHub writes github.run_id, and nothing else', () => {
    expect(parseRunId('14120345678')).toBe(14120345678);
    expect(parseRunId(' 7 ')).toBe(7);
    for (const bad of ['', '0', '-1', '1e9', '0x10', '12 34', '1.5', '99999999999999999']) {
      expect(parseRunId(bad)).toBeUndefined();
    }
  });
});
