import { Type } from 'typebox';
import { RepoRef } from './common.ts';
import { PR_NUMBER_MAX } from './queue.ts';

/** The `meta` part of POST /v1/test-results/upload (docs/upload-contract.md). */
export const UploadMeta = Type.Object({
  repo: RepoRef,
  org_url_slug: Type.String({ minLength: 1, maxLength: 64 }),
  branch: Type.String({ minLength: 1, maxLength: 1000 }),
  commit_sha: Type.String({ minLength: 1, maxLength: 100 }),
  pr_number: Type.Optional(Type.Integer({ minimum: 1, maximum: PR_NUMBER_MAX })),
  pr_title: Type.Optional(Type.String({ maxLength: 1000 })),
  job_name: Type.Optional(Type.String({ maxLength: 1000 })),
  job_url: Type.Optional(Type.String({ maxLength: 2000 })),
  variant: Type.Optional(Type.String({ maxLength: 64 })),
  run_attempt: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295 })),
  codeowners: Type.Optional(Type.String({ maxLength: 1_048_576 })),
  upload_key: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});

const Counts = Type.Object({
  test_cases: Type.Integer(),
  attempts: Type.Integer(),
  failures: Type.Integer(),
  retries: Type.Integer(),
  skipped: Type.Integer(),
});

const Problem = Type.Object({
  severity: Type.Union([Type.Literal('error'), Type.Literal('warning')]),
  message: Type.String(),
  line: Type.Optional(Type.Integer()),
  column: Type.Optional(Type.Integer()),
});

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const UploadResponse = Type.Object({
  upload_id: Type.String({ format: 'uuid' }),
  duplicate: Type.Boolean(),
  repo: RepoRef,
  counts: Type.Object({ files: Type.Integer(), ...Counts.properties }),
  files: Type.Array(
    Type.Object({ name: Type.String(), ok: Type.Boolean(), counts: Counts, problems: Type.Array(Problem) }),
  ),
  failed_tests: Type.Array(
    Type.Object({
      test_case_id: Type.String(),
      name: Type.String(),
      parent: NullableString,
      classname: NullableString,
      file: NullableString,
      quarantined: Type.Boolean(),
    }),
  ),
  failed_tests_truncated: Type.Boolean(),
  all_failures_quarantined: Type.Boolean(),
  /** Problems of the upload as a whole (docs/upload-contract.md); absent when there are none. */
  problems: Type.Optional(Type.Array(Problem)),
});
