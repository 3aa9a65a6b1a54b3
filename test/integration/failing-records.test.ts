// list-failing-tests reads the rates and failure groups of a whole page at once; each record must
// still be its own test's: the same as get-test-details answers for that test.
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const t = useTestApp();
const scope = { repo: REPO, org_url_slug: 'acme' };

beforeAll(async () => {
  // a fails once in two runs, b twice in three (two different failures), c never; d fails once.
  const runs: { name: string; fail?: string | false }[][] = [
    [{ name: 'a', fail: 'boom at 1' }, { name: 'b', fail: 'timeout 5000 ms' }, { name: 'c' }, { name: 'd' }],
    [{ name: 'a' }, { name: 'b', fail: 'assert 2 == 3' }, { name: 'c' }],
    [{ name: 'b' }, { name: 'c' }, { name: 'd', fail: 'boom at 7' }],
  ];
  for (const [i, cases] of runs.entries()) {
    const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: junitXml(cases) }], {
      sha: `c${i}`,
      branch: 'main',
    });
    expect(res.statusCode).toBe(200);
  }
});

describe('list-failing-tests records', () => {
  it('are each test’s own rates and failure groups, as get-test-details answers them', async () => {
    const now = Date.now();
    const res = await t.post(
      '/v1/flaky-tests/list-failing-tests',
      {
        ...scope,
        start_time: new Date(now - 3_600_000).toISOString(),
        end_time: new Date(now + 60_000).toISOString(),
        page_query: { page_size: 10 },
      },
      t.orgToken,
    );
    expect(res.statusCode).toBe(200);
    const tests = res.json().tests as {
      id: string;
      name: string;
      failure_rate_last_7d: number;
      failure_rate_last_24h: number;
      most_common_failures: { occurrence_count: number }[];
    }[];
    expect(tests.map((x) => x.name).sort()).toEqual(['a', 'b', 'd']);
    const byName = new Map(tests.map((x) => [x.name, x]));
    expect(byName.get('a')?.failure_rate_last_7d).toBe(0.5);
    expect(byName.get('b')?.failure_rate_last_7d).toBeCloseTo(2 / 3);
    expect(byName.get('b')?.most_common_failures).toHaveLength(2);
    expect(byName.get('d')?.failure_rate_last_24h).toBe(0.5);
    for (const listed of tests) {
      const details = await t.post(
        '/v1/flaky-tests/get-test-details',
        { ...scope, test_id: listed.id },
        t.orgToken,
      );
      expect(details.statusCode).toBe(200);
      const own = details.json().test;
      expect(listed.failure_rate_last_7d).toBe(own.failure_rate_last_7d);
      expect(listed.failure_rate_last_24h).toBe(own.failure_rate_last_24h);
      expect(listed.most_common_failures).toEqual(own.most_common_failures);
    }
  });
});
