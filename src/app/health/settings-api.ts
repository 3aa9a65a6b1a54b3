import type { ErrorDetail } from '../../domain/errors.ts';
import type {
  DetectionPolicy,
  FailureCountMonitorConfig,
  FailureRateMonitorConfig,
} from '../../domain/health/index.ts';
import type { HealthSettings } from './settings.ts';

/** The repository settings as the API shows them (snake_case, like the rest of the flaky-tests family). */
export interface SettingsRecord {
  quarantining_enabled: boolean;
  auto_quarantine_flaky: boolean;
  ticket_url_template: string | null;
  monitors: {
    pass_on_retry: { enabled: boolean; recovery_days: number; branches: string[] };
    failure_rate: {
      id: string;
      name: string;
      detection_type: 'flaky' | 'broken';
      activation_threshold: number;
      resolution_threshold: number;
      window_hours: number;
      min_sample_size: number;
      stale_timeout_hours: number | null;
      branches: string[];
      enabled: boolean;
    }[];
    failure_count: {
      id: string;
      name: string;
      detection_type: 'flaky' | 'broken';
      failure_count: number;
      window_hours: number;
      resolution_timeout_hours: number;
      branches: string[];
      enabled: boolean;
    }[];
  };
}

function rateRecord(m: FailureRateMonitorConfig): SettingsRecord['monitors']['failure_rate'][number] {
  return {
    id: m.id,
    name: m.name,
    detection_type: m.detectionType,
    activation_threshold: m.activationThreshold,
    resolution_threshold: m.resolutionThreshold,
    window_hours: m.windowHours,
    min_sample_size: m.minSampleSize,
    stale_timeout_hours: m.staleTimeoutHours,
    branches: m.branches,
    enabled: m.enabled,
  };
}

function countRecord(m: FailureCountMonitorConfig): SettingsRecord['monitors']['failure_count'][number] {
  return {
    id: m.id,
    name: m.name,
    detection_type: m.detectionType,
    failure_count: m.failureCount,
    window_hours: m.windowHours,
    resolution_timeout_hours: m.resolutionTimeoutHours,
    branches: m.branches,
    enabled: m.enabled,
  };
}

export function settingsRecord(s: HealthSettings): SettingsRecord {
  const p = s.policy;
  return {
    quarantining_enabled: s.quarantine.quarantiningEnabled,
    auto_quarantine_flaky: s.quarantine.autoQuarantineFlaky,
    ticket_url_template: s.ticketUrlTemplate,
    monitors: {
      pass_on_retry: {
        enabled: p.passOnRetry.enabled,
        recovery_days: p.passOnRetry.recoveryDays,
        branches: p.passOnRetry.branches,
      },
      failure_rate: p.failureRateMonitors.map(rateRecord),
      failure_count: p.failureCountMonitors.map(countRecord),
    },
  };
}

/** A settings change: every field optional; a monitor list, when given, replaces the list. */
export interface SettingsPatch {
  quarantining_enabled?: boolean | undefined;
  auto_quarantine_flaky?: boolean | undefined;
  ticket_url_template?: string | null | undefined;
  monitors?:
    | {
        pass_on_retry?: Partial<SettingsRecord['monitors']['pass_on_retry']> | undefined;
        failure_rate?:
          | (Omit<
              SettingsRecord['monitors']['failure_rate'][number],
              'resolution_threshold' | 'stale_timeout_hours' | 'enabled'
            > &
              Partial<
                Pick<
                  SettingsRecord['monitors']['failure_rate'][number],
                  'resolution_threshold' | 'stale_timeout_hours' | 'enabled'
                >
              >)[]
          | undefined;
        failure_count?:
          | (Omit<SettingsRecord['monitors']['failure_count'][number], 'failure_count' | 'enabled'> &
              Partial<
                Pick<SettingsRecord['monitors']['failure_count'][number], 'failure_count' | 'enabled'>
              >)[]
          | undefined;
      }
    | undefined;
}

function applyMonitors(policy: DetectionPolicy, m: NonNullable<SettingsPatch['monitors']>): DetectionPolicy {
  const por = m.pass_on_retry;
  return {
    passOnRetry: {
      enabled: por?.enabled ?? policy.passOnRetry.enabled,
      recoveryDays: por?.recovery_days ?? policy.passOnRetry.recoveryDays,
      branches: por?.branches ?? policy.passOnRetry.branches,
    },
    failureRateMonitors:
      m.failure_rate?.map((r) => ({
        id: r.id,
        name: r.name,
        detectionType: r.detection_type,
        activationThreshold: r.activation_threshold,
        resolutionThreshold: r.resolution_threshold ?? r.activation_threshold,
        windowHours: r.window_hours,
        minSampleSize: r.min_sample_size,
        staleTimeoutHours: r.stale_timeout_hours ?? null,
        branches: r.branches,
        enabled: r.enabled ?? true,
      })) ?? policy.failureRateMonitors,
    failureCountMonitors:
      m.failure_count?.map((c) => ({
        id: c.id,
        name: c.name,
        detectionType: c.detection_type,
        failureCount: c.failure_count ?? 1,
        windowHours: c.window_hours,
        resolutionTimeoutHours: c.resolution_timeout_hours,
        branches: c.branches,
        enabled: c.enabled ?? true,
      })) ?? policy.failureCountMonitors,
  };
}

export function applySettingsPatch(current: HealthSettings, patch: SettingsPatch): HealthSettings {
  return {
    quarantine: {
      quarantiningEnabled: patch.quarantining_enabled ?? current.quarantine.quarantiningEnabled,
      autoQuarantineFlaky: patch.auto_quarantine_flaky ?? current.quarantine.autoQuarantineFlaky,
    },
    policy: patch.monitors === undefined ? current.policy : applyMonitors(current.policy, patch.monitors),
    ticketUrlTemplate:
      patch.ticket_url_template === undefined ? current.ticketUrlTemplate : patch.ticket_url_template,
  };
}

const SECTIONS: Record<string, string> = {
  passOnRetry: 'monitors.pass_on_retry',
  failureRateMonitors: 'monitors.failure_rate',
  failureCountMonitors: 'monitors.failure_count',
};

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A domain policy problem path (`failureRateMonitors[0].windowHours`) as the API's JSON path. */
export function policyProblemDetail(p: { path: string; expected: string }): ErrorDetail {
  const [head = '', ...rest] = p.path.split('.');
  const match = head.match(/^(\w+)(\[\d+\])?$/);
  const section = match?.[1] !== undefined ? (SECTIONS[match[1]] ?? snake(match[1])) : snake(head);
  const path = `$.settings.${section}${match?.[2] ?? ''}${rest.map((r) => `.${snake(r)}`).join('')}`;
  return { path, expected: p.expected, message: `${path} must be ${p.expected}` };
}
