// Passes are stored per upload (upload_passes); an upload's passes may straddle a window's start.
// The 7-day and 24-hour failure rates count exactly the attempts inside each window, whichever
// upload they came in, on SQLite and PostgreSQL.
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-20T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);

/** One suite; each case passes or fails at its own time. */
function report(cases: { name: string; at: number; fail?: boolean }[]): string {
  const body = cases
    .map(
      (c) =>
        `<testcase name="${c.name}" classname="pkg.Window" timestamp="${iso(c.at)}" time="0.1">${
          c.fail ? '<failure message="boom">boom</failure>' : ''
        }</testcase>`,
    )
    .join('');
  return `<testsuites><testsuite name="s">${body}</testsuite></testsuites>`;
}

describe('failure rates over windows that split an upload’s passes', () => {
  const t = useTestApp({ now: () => NOW });
  const details = async (id: string) => {
    const res = await t.post(
      '/v1/flaky-tests/get-test-details',
      { repo: REPO, org_url_slug: 'acme', test_id: id },
      t.orgToken,
    );
    expect(res.statusCode).toBe(200);
    return res.json().test as { failure_rate_last_7d: number; failure_rate_last_24h: number };
  };

  it('counts each pass by its own time, not its upload’s', async () => {
    // One upload: "a" passes 25 h and 23 h ago (a retry of the same test), "b" 8 days and 2 days ago.
    const first = await upload(
      t,
      t.orgToken,
      [
        {
          name: 'old.xml',
          content: report([
            { name: 'a', at: NOW - 25 * HOUR },
            { name: 'a', at: NOW - 23 * HOUR },
            { name: 'b', at: NOW - 8 * 24 * HOUR },
            { name: 'b', at: NOW - 2 * 24 * HOUR },
          ]),
        },
      ],
      { sha: 'feed0001' },
    );
    expect(first.statusCode).toBe(200);
    // Another: both fail an hour ago.
    const second = await upload(
      t,
      t.orgToken,
      [
        {
          name: 'new.xml',
          content: report([
            { name: 'a', at: NOW - HOUR, fail: true },
            { name: 'b', at: NOW - HOUR, fail: true },
          ]),
        },
      ],
      { sha: 'feed0002' },
    );
    expect(second.statusCode).toBe(200);
    const ids = new Map(
      (second.json().failed_tests as { name: string; test_case_id: string }[]).map((f) => [
        f.name,
        f.test_case_id,
      ]),
    );
    // a: 7 days hold both passes and the failure; 24 hours the later pass and the failure.
    expect(await details(ids.get('a') as string)).toMatchObject({
      failure_rate_last_7d: 1 / 3,
      failure_rate_last_24h: 1 / 2,
    });
    // b: 7 days hold the later pass and the failure; 24 hours only the failure.
    expect(await details(ids.get('b') as string)).toMatchObject({
      failure_rate_last_7d: 1 / 2,
      failure_rate_last_24h: 1,
    });
  });
});
