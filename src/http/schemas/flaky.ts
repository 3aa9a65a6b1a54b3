import { Type } from 'typebox';
import { OrgUrlSlug, PageInfo, PageQuery, RepoRef } from './common.ts';

/** Schemas of the flaky-tests family, field for field as Trunk's published v1 spec (snake_case). */
const HtmlUrl = Type.Object({ html_url: Type.String() });

const TestStatus = Type.Object({
  value: Type.Union([Type.Literal('healthy'), Type.Literal('flaky'), Type.Literal('broken')]),
  reason: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
});

const unhealthyFields = {
  id: Type.String({ format: 'uuid' }),
  repository: HtmlUrl,
  html_url: Type.String(),
  name: Type.String(),
  variant: Type.String(),
  status: TestStatus,
  file_path: Type.Optional(Type.String()),
  parent: Type.Optional(Type.String()),
  classname: Type.Optional(Type.String()),
  codeowners: Type.Array(Type.String()),
  pull_requests_impacted_last_7d: Type.Integer({ minimum: 0 }),
  quarantined: Type.Boolean(),
  ticket: Type.Optional(HtmlUrl),
};

export const UnhealthyTest = Type.Object(unhealthyFields);

export const MostCommonFailure = Type.Object({
  summary: Type.String(),
  occurrence_count: Type.Integer({ minimum: 0 }),
  last_occurrence: Type.Optional(Type.String({ format: 'date-time' })),
});

export const DetailedTest = Type.Object({
  ...unhealthyFields,
  most_common_failures: Type.Array(MostCommonFailure),
  failure_rate_last_7d: Type.Number({ minimum: 0, maximum: 1 }),
  failure_rate_last_24h: Type.Number({ minimum: 0, maximum: 1 }),
});

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const QuarantinedTest = Type.Object({
  name: Type.String(),
  parent: NullableString,
  file: NullableString,
  classname: NullableString,
  status: Type.Union([Type.Literal('HEALTHY'), Type.Literal('FLAKY'), Type.Literal('BROKEN')]),
  codeowners: Type.Array(Type.String()),
  quarantine_setting: Type.Union([Type.Literal('ALWAYS_QUARANTINE'), Type.Literal('AUTO_QUARANTINE')]),
  quarantined_at: Type.String({ format: 'date-time' }),
  status_last_updated_at: Type.String({ format: 'date-time' }),
  test_case_id: Type.String(),
  variant: Type.String(),
});

/** Request bodies. */
export const ListUnhealthyBody = Type.Object({
  repo: RepoRef,
  org_url_slug: OrgUrlSlug,
  page_query: PageQuery,
  status: Type.Union([Type.Literal('FLAKY'), Type.Literal('BROKEN')]),
});
export const ListQuarantinedBody = Type.Object({
  repo: RepoRef,
  org_url_slug: OrgUrlSlug,
  page_query: PageQuery,
});
export const TestDetailsBody = Type.Object({
  repo: RepoRef,
  org_url_slug: OrgUrlSlug,
  test_id: Type.String({ format: 'uuid' }),
});
export const ListFailingBody = Type.Object({
  repo: RepoRef,
  org_url_slug: OrgUrlSlug,
  start_time: Type.String({ format: 'date-time' }),
  end_time: Type.String({ format: 'date-time' }),
  page_query: PageQuery,
});
export const LinkTicketBody = Type.Object({
  repo: RepoRef,
  test_case_id: Type.String({ format: 'uuid' }),
  external_ticket_id: Type.String({ minLength: 1, maxLength: 500 }),
});

export const UnhealthyPage = Type.Object({ tests: Type.Array(UnhealthyTest), page: PageInfo });
export const QuarantinedPage = Type.Object({
  quarantined_tests: Type.Array(QuarantinedTest),
  page: PageInfo,
});
export const DetailedPage = Type.Object({ tests: Type.Array(DetailedTest), page: PageInfo });
