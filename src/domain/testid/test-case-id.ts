// Trunk-compatible test identity: test_case_id as described in flaky.md §a.5
// (mirrors trunk-io/analytics-cli context/src/meta/id.rs, including the variant wrapper).
import { isUuidV5, URL_NAMESPACE, uuidV5 } from './uuid.ts';

/** Everything that determines a test_case_id. Missing values may be null, undefined or ''. */
export interface TestIdentityInput {
  /** Organisation URL slug, e.g. `acme`. */
  orgSlug: string;
  /** `<host>/<owner>/<name>`, e.g. `github.com/acme/web` (see `repoFullName`). */
  repoFullName: string;
  file?: string | null;
  classname?: string | null;
  /** Name of the outermost `<testsuite>`. */
  parent?: string | null;
  name?: string | null;
  /** The testcase `id` attribute, if any (`trunk:…` or an existing v5 UUID). */
  customId?: string | null;
  /** Upload variant such as `linux`; '' or null means none. */
  variant?: string | null;
}

const LEGACY_KIND = 'JUNIT_TESTCASE';
const CUSTOM_PREFIX = 'trunk:';

/** Builds the `<host>/<owner>/<name>` string that goes into the id. */
export function repoFullName(repo: { host: string; owner: string; name: string }): string {
  return `${repo.host}/${repo.owner}/${repo.name}`;
}

/** The test_case_id Trunk would assign: the base id, wrapped once more with the variant when there is one. */
export function testCaseId(input: TestIdentityInput): string {
  const base = baseTestCaseId(input);
  const variant = input.variant ?? '';
  return variant === '' ? base : hashFields([base, variant]);
}

/** The id before the variant wrapper (`gen_info_id` in analytics-cli). */
export function baseTestCaseId(input: TestIdentityInput): string {
  const variant = input.variant ?? '';
  const variantSuffix = variant === '' ? [] : [variant];
  const customId = input.customId ?? '';
  if (customId.startsWith(CUSTOM_PREFIX)) {
    return hashFields([input.orgSlug, input.repoFullName, customId, ...variantSuffix]);
  }
  if (customId !== '' && isUuidV5(customId)) {
    return variant === '' ? customId : hashFields([customId, variant]);
  }
  const fields = [input.file, input.classname, input.parent, input.name].map((value) => value ?? '');
  return hashFields([input.orgSlug, input.repoFullName, ...fields, LEGACY_KIND, ...variantSuffix]);
}

function hashFields(fields: string[]): string {
  return uuidV5(fields.join('#'), URL_NAMESPACE);
}
