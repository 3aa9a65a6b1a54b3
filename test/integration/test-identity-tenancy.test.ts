import { beforeAll, describe, expect, it } from 'vitest';
import { upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

/** A custom v5 test id is used as is (Trunk's recipe); two repositories may well send the same one. */
const CUSTOM = 'a6e84936-3ee9-57d5-b041-ae124896f654';
const report = (fail: boolean) =>
  `<testsuite name="s"><testcase name="shared" id="${CUSTOM}">${fail ? '<failure message="x">boom</failure>' : ''}</testcase></testsuite>`;

describe('test identity across tenants', () => {
  const t = useTestApp();
  let globex: string;
  const acmeRepo = { host: 'github.com', owner: 'acme', name: 'web' };
  const globexRepo = { host: 'github.com', owner: 'globex', name: 'web' };

  beforeAll(async () => {
    globex = await t.token('globex');
  });

  it('keeps the first repository’s test with the custom id, and gives the other repository its own test', async () => {
    const first = await upload(t, t.orgToken, [{ name: 'a.xml', content: report(false) }], {
      repo: acmeRepo,
      org: 'acme',
    });
    expect(first.json().counts.test_cases).toBe(1);
    const second = await upload(t, globex, [{ name: 'a.xml', content: report(true) }], {
      repo: globexRepo,
      org: 'globex',
    });
    expect(second.statusCode).toBe(200);
    const theirs = second.json().failed_tests[0].test_case_id;
    expect(theirs).not.toBe(CUSTOM);

    const acmeView = await t.post(
      '/v1/flaky-tests/get-test-details',
      { repo: acmeRepo, org_url_slug: 'acme', test_id: CUSTOM },
      t.orgToken,
    );
    expect(acmeView.json().test.failure_rate_last_7d).toBe(0);
    const globexView = await t.post(
      '/v1/flaky-tests/get-test-details',
      { repo: globexRepo, org_url_slug: 'globex', test_id: theirs },
      globex,
    );
    expect(globexView.json().test).toMatchObject({ name: 'shared', failure_rate_last_7d: 1 });
    expect(
      (
        await t.post(
          '/v1/flaky-tests/get-test-details',
          { repo: globexRepo, org_url_slug: 'globex', test_id: CUSTOM },
          globex,
        )
      ).statusCode,
    ).toBe(404);

    const again = await upload(t, globex, [{ name: 'a.xml', content: report(false) }], {
      repo: globexRepo,
      org: 'globex',
      sha: 'later',
    });
    expect(again.json().counts.test_cases).toBe(1);
    const rate = (
      await t.post(
        '/v1/flaky-tests/get-test-details',
        { repo: globexRepo, org_url_slug: 'globex', test_id: theirs },
        globex,
      )
    ).json().test.failure_rate_last_7d;
    expect(rate).toBe(0.5);
  });
});
