// Issue 28's "done when": a fresh demo, with no set-up of its own, shows on the dashboard broken,
// flaky and failing tests, a queue that merged and failed PRs, and durations with the failures that
// passed on a retry (the demo's reports carry times and retries). Read through the dashboard pages
// of the demo's real server, signed in with its token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Demo } from '../../src/demo/demo.ts';
import { tableRows } from '../support/dashboard.ts';
import { startDemo } from '../support/demo.ts';

describe('the demo on the dashboard', () => {
  let demo: Demo;
  let cookie: string;
  let base: string;

  beforeAll(async () => {
    demo = await startDemo('mainline-dashboard-demo-');
    const res = await fetch(`${demo.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: demo.token }).toString(),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
    base = `/${demo.org}/repos/${demo.repo.host}/${demo.repo.owner}/${demo.repo.name}`;
  }, 90_000);

  afterAll(() => demo?.close());

  const page = async (target: string) => {
    const res = await fetch(`${demo.url}${target}`, { headers: { cookie } });
    expect(res.status, target).toBe(200);
    return res.text();
  };

  it('shows broken, flaky and failing tests, the queue, durations and what flakes cost', async () => {
    const broken = await page(`${base}?show=broken`);
    expect(tableRows(broken).map((r) => r[0])).toEqual([
      expect.stringContaining('rounds the total to the cent'),
    ]);
    const flaky = await page(`${base}?show=flaky`);
    expect(tableRows(flaky).some((r) => (r[0] ?? '').includes('suggests completions while typing'))).toBe(
      true,
    );
    const failing = await page(`${base}/failing`);
    expect(tableRows(failing).length).toBeGreaterThanOrEqual(2);
    const queue = await page(`${base}/queues/main`);
    expect(queue).toMatch(/merged/);
    expect(queue).toContain('<h2 id="queue-charts">Last 24 hours</h2>');
    const durations = await page(`${base}/durations`);
    expect(tableRows(durations).length).toBeGreaterThan(10);
    // The flaky test failed and passed on the retry within one report: CI time lost, counted.
    expect(durations).toMatch(/lost to [1-9]\d* failures? that passed on a retry/);
    expect(await page(`/${demo.org}`)).toMatch(/<dt>Retried failures, 7 d<\/dt><dd><a [^>]+>[1-9]/);
  });
});
