// Whether a test is quarantined (flaky.md §a.4). BROKEN tests are never auto-quarantined.
import type { StatusValue } from './snapshot.ts';

/** The per-test quarantine override set by an admin. */
export type QuarantineOverride = 'ALWAYS_QUARANTINE' | 'NEVER_QUARANTINE' | 'AUTO';

export interface QuarantineSettings {
  /** The repository's master switch; off means nothing is quarantined. */
  quarantiningEnabled: boolean;
  /** Quarantine FLAKY tests without an override. */
  autoQuarantineFlaky: boolean;
}

export interface QuarantineInput {
  status: StatusValue;
  override: QuarantineOverride;
  settings: QuarantineSettings;
}

export interface QuarantineDecision {
  quarantined: boolean;
  /** The API's `quarantine_setting`: why it is quarantined; null when it is not. */
  setting: 'ALWAYS_QUARANTINE' | 'AUTO_QUARANTINE' | null;
  reason: string;
}

/** Decides quarantine from the status, the test's override and the repository switches. */
export function quarantineDecision(input: QuarantineInput): QuarantineDecision {
  const { status, override, settings } = input;
  if (!settings.quarantiningEnabled) {
    return { quarantined: false, setting: null, reason: 'Quarantining is turned off for this repository' };
  }
  if (override === 'ALWAYS_QUARANTINE') {
    return { quarantined: true, setting: 'ALWAYS_QUARANTINE', reason: 'Always quarantined (test override)' };
  }
  if (override === 'NEVER_QUARANTINE') {
    return { quarantined: false, setting: null, reason: 'Never quarantined (test override)' };
  }
  return automatic(status, settings.autoQuarantineFlaky);
}

function automatic(status: StatusValue, autoQuarantineFlaky: boolean): QuarantineDecision {
  if (status === 'BROKEN') {
    return { quarantined: false, setting: null, reason: 'Broken tests are never quarantined automatically' };
  }
  if (status === 'HEALTHY') return { quarantined: false, setting: null, reason: 'The test is healthy' };
  if (!autoQuarantineFlaky) {
    return { quarantined: false, setting: null, reason: 'Auto-quarantine of flaky tests is turned off' };
  }
  return {
    quarantined: true,
    setting: 'AUTO_QUARANTINE',
    reason: 'Quarantined automatically because it is flaky',
  };
}
