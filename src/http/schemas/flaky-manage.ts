import { Type } from 'typebox';
import { OrgUrlSlug, RepoRef } from './common.ts';
import { DetailedTest } from './flaky.ts';

const Branches = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
  maxItems: 10,
  description: 'branch globs: * matches anything including /, ? one character',
});
const Detection = Type.Union([Type.Literal('flaky'), Type.Literal('broken')]);
const Fraction = Type.Number({ minimum: 0, maximum: 1 });
const MonitorId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' });

const PassOnRetry = Type.Object({
  enabled: Type.Boolean(),
  recovery_days: Type.Integer({ minimum: 1, maximum: 15 }),
  branches: Branches,
});

const FailureRate = Type.Object({
  id: MonitorId,
  name: Type.String({ maxLength: 200 }),
  detection_type: Detection,
  activation_threshold: Fraction,
  resolution_threshold: Fraction,
  window_hours: Type.Number({ exclusiveMinimum: 0 }),
  min_sample_size: Type.Integer({ minimum: 1 }),
  stale_timeout_hours: Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.Null()]),
  branches: Branches,
  enabled: Type.Boolean(),
});

const FailureCount = Type.Object({
  id: MonitorId,
  name: Type.String({ maxLength: 200 }),
  detection_type: Detection,
  failure_count: Type.Integer({ minimum: 1 }),
  window_hours: Type.Number({ exclusiveMinimum: 0 }),
  resolution_timeout_hours: Type.Number({ exclusiveMinimum: 0 }),
  branches: Branches,
  enabled: Type.Boolean(),
});

export const SettingsRecord = Type.Object({
  quarantining_enabled: Type.Boolean(),
  auto_quarantine_flaky: Type.Boolean(),
  ticket_url_template: Type.Union([Type.String(), Type.Null()]),
  monitors: Type.Object({
    pass_on_retry: PassOnRetry,
    failure_rate: Type.Array(FailureRate),
    failure_count: Type.Array(FailureCount),
  }),
});

export const SettingsPatch = Type.Object({
  quarantining_enabled: Type.Optional(Type.Boolean()),
  auto_quarantine_flaky: Type.Optional(Type.Boolean()),
  ticket_url_template: Type.Optional(
    Type.Union([Type.String({ maxLength: 500, pattern: '\\{id\\}' }), Type.Null()]),
  ),
  monitors: Type.Optional(
    Type.Object({
      pass_on_retry: Type.Optional(Type.Partial(PassOnRetry)),
      failure_rate: Type.Optional(
        Type.Array(
          Type.Object({
            ...FailureRate.properties,
            resolution_threshold: Type.Optional(Fraction),
            stale_timeout_hours: Type.Optional(
              Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.Null()]),
            ),
            enabled: Type.Optional(Type.Boolean()),
          }),
          { maxItems: 20 },
        ),
      ),
      failure_count: Type.Optional(
        Type.Array(
          Type.Object({
            ...FailureCount.properties,
            failure_count: Type.Optional(Type.Integer({ minimum: 1 })),
            enabled: Type.Optional(Type.Boolean()),
          }),
          { maxItems: 20 },
        ),
      ),
    }),
  ),
});

export const Scoped = { repo: RepoRef, org_url_slug: OrgUrlSlug };
export const TestScoped = { ...Scoped, test_id: Type.String({ format: 'uuid' }) };
export const TestResponse = Type.Object({ test: DetailedTest });

export const HistoryEvent = Type.Object(
  { at: Type.String({ format: 'date-time' }), kind: Type.String() },
  {
    additionalProperties: true,
    description:
      'kind is status, quarantine, quarantine_override, manual_flag or ticket; other fields depend on it',
  },
);
