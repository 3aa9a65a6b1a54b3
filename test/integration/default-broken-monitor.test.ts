// Broken tests are found by default (issue 28): a repository created now starts with a failure-count
// monitor that flags BROKEN a test failing 4 times within an hour, while a repository that existed
// before that default (migration 0019) keeps the settings it had: pass-on-retry alone.
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { migratorOf } from '../support/migrations.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const OLD = { host: 'github.com', owner: 'acme', name: 'old' };
const NEW = { host: 'github.com', owner: 'acme', name: 'new' };

describe('the default broken-test monitor', () => {
  const t = useTestApp();

  const report = junitXml([
    { name: 'charges the card', fail: 'AssertionError: expected 200, got 500' },
    { name: 'lists orders' },
  ]);
  const uploadFailing = async (repo: typeof OLD, n: number, branch = 'main') => {
    for (let i = 0; i < n; i++) {
      const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: report }], {
        repo,
        branch,
        sha: `c0ffee0${i}`,
        ...(branch === 'main' ? {} : { pr: 7 }),
      });
      expect(res.statusCode).toBe(200);
    }
  };
  const unhealthy = async (repo: typeof OLD, status: 'BROKEN' | 'FLAKY') => {
    const res = await t.post(
      '/v1/flaky-tests/list-unhealthy-tests',
      { repo, org_url_slug: 'acme', status, page_query: { page_size: 100 } },
      t.orgToken,
    );
    expect(res.statusCode).toBe(200);
    return res.json().tests as {
      name: string;
      status: { value: string; reason: string };
      quarantined: boolean;
    }[];
  };
  const settings = async (repo: typeof OLD) => {
    const res = await t.post(
      '/v1/flaky-tests/get-repository-settings',
      { repo, org_url_slug: 'acme' },
      t.orgToken,
    );
    expect(res.statusCode).toBe(200);
    return res.json().settings.monitors as { failure_count: { id: string }[] };
  };

  it('a repository that existed before the default keeps pass-on-retry alone after the upgrade', async () => {
    await uploadFailing(OLD, 1);
    // Back to the schema before migration 0019 and up again: the upgrade of a server that had OLD.
    const migrator = migratorOf(t.db.database.db);
    expect((await migrator.migrateTo('0018_test_rollups')).error).toBeUndefined();
    expect((await migrateToLatest(t.db.database)).applied).toContain('0019_default_broken_monitor');

    expect((await settings(OLD)).failure_count).toEqual([]);
    await uploadFailing(OLD, 5);
    expect(await unhealthy(OLD, 'BROKEN')).toEqual([]);
  });

  it('failures on a pull request branch do not count: a change being written fails its tests', async () => {
    await uploadFailing(NEW, 5, 'feature/checkout');
    expect(await unhealthy(NEW, 'BROKEN')).toEqual([]);
  });

  it('a new repository whose test fails on every upload to main shows it BROKEN, not quarantined', async () => {
    await uploadFailing(NEW, 3);
    expect(await unhealthy(NEW, 'BROKEN')).toEqual([]);
    expect((await settings(NEW)).failure_count).toEqual([
      {
        id: 'default-broken',
        name: 'Broken: 4 failures within an hour',
        detection_type: 'broken',
        failure_count: 4,
        window_hours: 1,
        resolution_timeout_hours: 24,
        branches: [
          'main',
          'master',
          'mainline-merge/*',
          'trunk-merge/*',
          'gh-readonly-queue/*',
          'graphite-merge/*',
        ],
        enabled: true,
      },
    ]);
    await uploadFailing(NEW, 1);
    const broken = await unhealthy(NEW, 'BROKEN');
    expect(broken.map((b) => [b.name, b.status.value, b.quarantined])).toEqual([
      ['charges the card', 'broken', false],
    ]);
    expect(broken[0]?.status.reason).toMatch(/^4 failures within 1 h on main, master, mainline-merge\/\*, /);
    expect((await settings(OLD)).failure_count).toEqual([]);
  });

  it('a repository turns it off like any monitor, and its tests resolve', async () => {
    const res = await t.post(
      '/v1/flaky-tests/update-repository-settings',
      { repo: NEW, org_url_slug: 'acme', settings: { monitors: { failure_count: [] } } },
      t.orgToken,
    );
    expect(res.statusCode).toBe(200);
    expect(await unhealthy(NEW, 'BROKEN')).toEqual([]);
  });
});
