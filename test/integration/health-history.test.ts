import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHealthSweep } from '../../src/app/health/sweep.ts';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { BROKEN_ON_MAIN, updateRepositorySettings } from '../support/settings.ts';
import { sweepContext } from '../support/sweep.ts';
import { trunkValidator } from '../support/trunk-schema.ts';
import { junitXml, upload } from '../support/upload.ts';

const DAY = 24 * 3_600_000;
const validUnhealthy = trunkValidator('UnhealthyTest');
const validQuarantined = trunkValidator('QuarantinedTest');
const validPage = trunkValidator('Page');

describe('a scripted history seen through the flaky-tests endpoints', () => {
  let t: TestApp;
  let token: string;
  let clock = Date.UTC(2026, 10, 1, 12);
  const scope = { repo: REPO, org_url_slug: 'acme' };
  const unhealthy = async (status: 'FLAKY' | 'BROKEN') => {
    const res = await t.post(
      '/v1/flaky-tests/list-unhealthy-tests',
      { ...scope, status, page_query: { page_size: 100 } },
      token,
    );
    expect(res.statusCode).toBe(200);
    expect(validPage(res.json().page)).toEqual([]);
    for (const test of res.json().tests) expect(validUnhealthy(test)).toEqual([]);
    return res.json().tests as {
      id: string;
      name: string;
      status: { value: string; reason: string; timestamp: string };
      quarantined: boolean;
      pull_requests_impacted_last_7d: number;
      ticket?: { html_url: string };
    }[];
  };
  const quarantined = async () => {
    const res = await t.post(
      '/v1/flaky-tests/list-quarantined-tests',
      { ...scope, page_query: { page_size: 100 } },
      token,
    );
    expect(res.statusCode).toBe(200);
    for (const test of res.json().quarantined_tests) expect(validQuarantined(test)).toEqual([]);
    return res.json().quarantined_tests as {
      name: string;
      test_case_id: string;
      quarantine_setting: string;
      status: string;
    }[];
  };
  const details = async (id: string) =>
    (await t.post('/v1/flaky-tests/get-test-details', { ...scope, test_id: id }, token)).json().test;
  const history = async (id: string) =>
    (await t.post('/v1/flaky-tests/get-test-history', { ...scope, test_id: id }, token)).json().events;

  beforeAll(async () => {
    t = await buildTestApp({}, { now: () => clock });
    token = await t.token('acme');
  });
  afterAll(() => t.close());

  it('fail then pass on one commit → FLAKY, with a reason and the time of the retry, and auto-quarantined', async () => {
    await upload(
      t,
      token,
      [
        {
          name: 'a.xml',
          content: junitXml([
            { name: 'test_login', fail: 'AssertionError: expected 200 got 500' },
            { name: 'test_ok' },
          ]),
        },
      ],
      { sha: 'c0ffee01', pr: 7, branch: 'feature/x' },
    );
    clock += 60_000;
    const retry = await upload(
      t,
      token,
      [{ name: 'a.xml', content: junitXml([{ name: 'test_login' }, { name: 'test_ok' }]) }],
      { sha: 'c0ffee01', pr: 7, branch: 'feature/x' },
    );
    expect(retry.json().failed_tests).toEqual([]);
    const flaky = await unhealthy('FLAKY');
    expect(flaky.map((x) => x.name)).toEqual(['test_login']);
    const [test] = flaky;
    expect(test?.status.value).toBe('flaky');
    expect(test?.status.reason).toMatch(/^Failed and passed on the same commit c0ffee0/);
    expect(test?.status.timestamp).toBe(new Date(clock).toISOString());
    expect(test?.quarantined).toBe(true);
    expect(test?.pull_requests_impacted_last_7d).toBe(1);
    expect((await quarantined()).map((q) => [q.name, q.quarantine_setting, q.status])).toEqual([
      ['test_login', 'AUTO_QUARANTINE', 'FLAKY'],
    ]);
    const d = await details(test!.id);
    expect(d.failure_rate_last_7d).toBe(0.5);
    expect(d.most_common_failures).toEqual([
      {
        summary: 'AssertionError: expected 200 got 500',
        occurrence_count: 1,
        last_occurrence: expect.any(String),
      },
    ]);
    const events = await history(test!.id);
    expect(events.map((e: { kind: string }) => e.kind)).toEqual(
      expect.arrayContaining(['status', 'quarantine']),
    );
  });

  it('a failure now counts as quarantined for the upload: all_failures_quarantined', async () => {
    const res = await upload(
      t,
      token,
      [
        {
          name: 'a.xml',
          content: junitXml([{ name: 'test_login', fail: 'AssertionError: expected 200 got 500' }]),
        },
      ],
      { sha: 'c0ffee02' },
    );
    expect(res.json()).toMatchObject({
      all_failures_quarantined: true,
      failed_tests: [{ name: 'test_login', quarantined: true }],
    });
  });

  it('a high failure rate on main → BROKEN, which is never auto-quarantined', async () => {
    const settings = await updateRepositorySettings(t, token, {
      monitors: { failure_rate: [BROKEN_ON_MAIN] },
    });
    expect(settings.statusCode).toBe(200);
    expect(settings.json().settings.monitors.failure_rate[0]).toMatchObject({
      id: 'broken-on-main',
      resolution_threshold: 0.8,
      enabled: true,
    });
    for (const sha of ['d1', 'd2', 'd3']) {
      clock += 60_000;
      await upload(
        t,
        token,
        [
          {
            name: 'b.xml',
            content: junitXml([{ name: 'test_db', fail: 'ConnectionRefused: 127.0.0.1:5432' }]),
          },
        ],
        { sha },
      );
    }
    const broken = await unhealthy('BROKEN');
    expect(broken.map((x) => x.name)).toEqual(['test_db']);
    expect(broken[0]?.status.reason).toMatch(/Failure rate 100% ≥ 80%/);
    expect(broken[0]?.quarantined).toBe(false);
    expect((await quarantined()).map((q) => q.name)).not.toContain('test_db');
  });

  it('a quiet recovery period → HEALTHY again at the periodic pass, and out of quarantine', async () => {
    const [flaky] = await unhealthy('FLAKY');
    clock += 8 * DAY;
    const report = await runHealthSweep(sweepContext(t, () => clock));
    expect(report.statusChanges).toBeGreaterThanOrEqual(1);
    expect(await unhealthy('FLAKY')).toEqual([]);
    expect((await quarantined()).map((q) => q.name)).toEqual([]);
    const d = await details(flaky!.id);
    expect(d.status).toMatchObject({
      value: 'healthy',
      reason: expect.stringMatching(/^Recovered: no pass-on-retry event for 7 days/),
    });
  });

  it('overrides: ALWAYS_QUARANTINE a healthy test, NEVER_QUARANTINE a flagged one; both recorded in history', async () => {
    const [broken] = await unhealthy('BROKEN');
    const always = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { ...scope, test_id: broken!.id, setting: 'ALWAYS_QUARANTINE', reason: 'known outage' },
      token,
    );
    expect(always.statusCode).toBe(200);
    expect(always.json().test.quarantined).toBe(true);
    expect((await quarantined()).map((q) => [q.name, q.quarantine_setting])).toEqual([
      ['test_db', 'ALWAYS_QUARANTINE'],
    ]);
    const auto = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { ...scope, test_id: broken!.id, setting: 'AUTO' },
      token,
    );
    expect(auto.json().test.quarantined).toBe(false);
    const kinds = (await history(broken!.id)).map((e: { kind: string }) => e.kind);
    expect(kinds.filter((k: string) => k === 'quarantine_override')).toHaveLength(2);
  });

  it('flag as flaky forces FLAKY (and auto-quarantine); removing the flag falls back to the monitors', async () => {
    const res = await upload(t, token, [{ name: 'c.xml', content: junitXml([{ name: 'test_calm' }]) }], {
      sha: 'e1',
    });
    const id = (
      await t.post(
        '/v1/flaky-tests/list-failing-tests',
        {
          ...scope,
          start_time: new Date(clock - DAY).toISOString(),
          end_time: new Date(clock + 1).toISOString(),
          page_query: { page_size: 10 },
        },
        token,
      )
    ).json();
    expect(res.statusCode).toBe(200);
    expect(id.tests).toEqual([]);
    const calm = (
      await upload(t, token, [{ name: 'c.xml', content: junitXml([{ name: 'test_calm', fail: 'x' }]) }], {
        sha: 'e2',
        branch: 'dev',
      })
    ).json().failed_tests[0];
    const flagged = await t.post(
      '/v1/flaky-tests/flag-test',
      { ...scope, test_id: calm.test_case_id, flagged: true, reason: 'times out on arm64' },
      token,
    );
    expect(flagged.json().test).toMatchObject({
      status: { value: 'flaky', reason: expect.stringContaining('times out on arm64') },
      quarantined: true,
    });
    const unflagged = await t.post(
      '/v1/flaky-tests/flag-test',
      { ...scope, test_id: calm.test_case_id, flagged: false },
      token,
    );
    expect(unflagged.json().test).toMatchObject({ status: { value: 'healthy' }, quarantined: false });
  });

  it('links a ticket, using the repository’s ticket URL template', async () => {
    await t.post(
      '/v1/flaky-tests/update-repository-settings',
      { ...scope, settings: { ticket_url_template: 'https://linear.app/acme/issue/{id}' } },
      token,
    );
    const [broken] = await unhealthy('BROKEN');
    const res = await t.post(
      '/v1/flaky-tests/link-ticket-to-test-case',
      { repo: REPO, test_case_id: broken!.id, external_ticket_id: 'KAN-123' },
      token,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    expect((await unhealthy('BROKEN'))[0]?.ticket).toEqual({
      html_url: 'https://linear.app/acme/issue/KAN-123',
    });
  });

  it('turning quarantining off un-quarantines everything and getQuarantineConfig says isDisabled', async () => {
    await t.post(
      '/v1/flaky-tests/update-repository-settings',
      { ...scope, settings: { quarantining_enabled: false } },
      token,
    );
    const cfg = await t.post(
      '/v1/metrics/getQuarantineConfig',
      { repo: REPO, orgUrlSlug: 'acme', remoteUrls: [], testIdentifiers: [] },
      token,
    );
    expect(cfg.json()).toEqual({ isDisabled: true, testIds: [] });
  });

  it('answers unknown tests with 404 TEST_NOT_FOUND and bad settings with details naming the field', async () => {
    const missing = await t.post(
      '/v1/flaky-tests/get-test-details',
      { ...scope, test_id: '01234567-0123-0123-0123-0123456789ab' },
      token,
    );
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('TEST_NOT_FOUND');
    const bad = await t.post(
      '/v1/flaky-tests/update-repository-settings',
      {
        ...scope,
        settings: {
          monitors: {
            failure_count: [
              {
                id: 'c',
                name: 'c',
                detection_type: 'flaky',
                window_hours: 6,
                resolution_timeout_hours: 1,
                branches: ['main'],
              },
            ],
          },
        },
      },
      token,
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details[0].path).toBe(
      '$.settings.monitors.failure_count[0].resolution_timeout_hours',
    );
  });
});
