import type { TestCaseRow } from '../../store/tests/cases.ts';
import type { RecordRow } from '../../store/tests/lists.ts';
import type { Repository } from '../repositories.ts';
import { repositoryHtmlUrl, testHtmlUrl } from '../urls.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** Where records link to: this server's pages for the repository and the test. */
export interface LinkBase {
  readonly publicUrl: string;
  readonly orgSlug: string;
  readonly repository: Repository;
}

/**
 * The links of one repository's records, built once per response rather than per record (encoding
 * the repository path is most of a record's cost): the `repository` object every record shares and
 * the prefix a test's id completes into its html_url.
 */
export interface RecordLinks {
  readonly repository: { readonly html_url: string };
  readonly testUrlPrefix: string;
}

function buildLinks(publicUrl: string, orgSlug: string, repository: Repository): RecordLinks {
  // Frozen: records of many answers share them.
  return Object.freeze({
    repository: Object.freeze({ html_url: repositoryHtmlUrl(publicUrl, orgSlug, repository) }),
    // testHtmlUrl appends the id as it is, so the URL of the empty id is the prefix of every test's.
    testUrlPrefix: testHtmlUrl(publicUrl, orgSlug, repository, ''),
  });
}

/** Links made for a repository object, with the public URL and organization slug they were made for. */
interface MadeLinks {
  readonly publicUrl: string;
  readonly orgSlug: string;
  readonly links: RecordLinks;
}

/**
 * Links by repository object (a per-object WeakMap): the repository cache hands out one object per
 * repository, whose host, owner and name never change, so its links are encoded once, not on every
 * read (a kept read's key holds the test URL prefix). Remade when asked with another public URL or slug.
 */
const madeLinks = new WeakMap<Repository, MadeLinks>();

export function recordLinks(links: LinkBase): RecordLinks {
  const { publicUrl, orgSlug, repository } = links;
  const made = madeLinks.get(repository);
  if (made !== undefined && made.publicUrl === publicUrl && made.orgSlug === orgSlug) return made.links;
  const fresh = buildLinks(publicUrl, orgSlug, repository);
  madeLinks.set(repository, { publicUrl, orgSlug, links: fresh });
  return fresh;
}

/**
 * The unhealthy-test record of Trunk's v1 spec. Optional strings are omitted when unknown, never null.
 * The links come prebuilt for the page: the records share one `repository` object.
 */
export function unhealthyRecord(row: RecordRow, links: RecordLinks) {
  return {
    id: row.id,
    repository: links.repository,
    html_url: links.testUrlPrefix + row.id,
    name: row.name,
    variant: row.variant,
    status: {
      value: row.status.toLowerCase() as 'healthy' | 'flaky' | 'broken',
      reason: row.status_reason,
      timestamp: iso(row.status_at),
    },
    ...(row.file !== null ? { file_path: row.file } : {}),
    ...(row.parent !== null ? { parent: row.parent } : {}),
    ...(row.classname !== null ? { classname: row.classname } : {}),
    codeowners: JSON.parse(row.codeowners) as string[],
    pull_requests_impacted_last_7d: row.status === 'HEALTHY' ? 0 : row.prs_impacted_7d,
    quarantined: row.quarantined === 1,
    ...(row.ticket_url !== null ? { ticket: { html_url: row.ticket_url } } : {}),
  };
}

/** The quarantined-test record: a different shape (nullable strings, upper-case status). */
export function quarantinedRecord(row: TestCaseRow) {
  return {
    name: row.name,
    parent: row.parent,
    file: row.file,
    classname: row.classname,
    status: row.status as 'HEALTHY' | 'FLAKY' | 'BROKEN',
    codeowners: JSON.parse(row.codeowners) as string[],
    quarantine_setting: (row.quarantine_setting ?? 'AUTO_QUARANTINE') as
      | 'ALWAYS_QUARANTINE'
      | 'AUTO_QUARANTINE',
    quarantined_at: iso(row.quarantined_at ?? row.status_at),
    status_last_updated_at: iso(row.status_at),
    test_case_id: row.id,
    variant: row.variant,
  };
}
