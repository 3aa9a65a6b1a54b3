import type { TestCaseRow } from '../../store/test-cases.ts';
import type { Repository } from '../repositories.ts';
import { repositoryHtmlUrl, testHtmlUrl } from '../urls.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** Where records link to: this server's pages for the repository and the test. */
export interface LinkBase {
  readonly publicUrl: string;
  readonly orgSlug: string;
  readonly repository: Repository;
}

/** The unhealthy-test record of Trunk's v1 spec. Optional strings are omitted when unknown, never null. */
export function unhealthyRecord(row: TestCaseRow, links: LinkBase) {
  return {
    id: row.id,
    repository: { html_url: repositoryHtmlUrl(links.publicUrl, links.orgSlug, links.repository) },
    html_url: testHtmlUrl(links.publicUrl, links.orgSlug, links.repository, row.id),
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
