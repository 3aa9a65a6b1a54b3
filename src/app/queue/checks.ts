import type { CheckOutcome, CheckReport } from '../../domain/queue/index.ts';
import type { CommitStatusRow } from '../../store/forge/git-prs.ts';

const OUTCOME: Record<string, CheckOutcome> = {
  pending: 'pending',
  success: 'passed',
  failure: 'failed',
  error: 'failed',
};

/** Stored commit statuses (GitHub's states) as the engine's check reports. */
export function checkReports(statuses: readonly CommitStatusRow[]): CheckReport[] {
  return statuses.map((s) => ({
    name: s.context,
    outcome: OUTCOME[s.state] ?? 'pending',
    ...(s.url ? { url: s.url } : {}),
    // error fails a check like failure, but the testing details report it as ERROR.
    ...(s.state === 'error' ? { errored: true as const } : {}),
  }));
}
