import { describe, expect, it } from 'vitest';
import { isDashboardPage } from '../../src/web/pages.ts';

// Which paths are the dashboard's pages (docs/dashboard.md, "Which paths are pages"): only these
// send a visitor without a session to sign in; every other unknown path is the API's 404 envelope.
describe('isDashboardPage', () => {
  const repo = '/acme/repos/github.com/acme/web';

  it('takes the overview, the repository pages and the CLI’s test link for pages', () => {
    for (const url of [
      '/acme',
      '/Acme',
      '/acme?x=1',
      '/a',
      `/${'a'.repeat(64)}`,
      '/my-org-2',
      repo,
      `${repo}?show=flaky&page=2`,
      `${repo}/tests/8d3f`,
      `${repo}/queues/main`,
      `${repo}/queues/release%2F1.0/runs/r1`,
      `${repo}/queues/main/prs/12`,
      `${repo}/pulls/3`,
      '/acme/repos/gitlab.com/group/sub/web',
      '/acme/flaky-tests/test/8d3f?repo=acme%2Fweb',
    ]) {
      expect(isDashboardPage('GET', url), url).toBe(true);
      expect(isDashboardPage('HEAD', url), url).toBe(true);
    }
    expect(isDashboardPage('POST', `${repo}/tests/8d3f/quarantine`)).toBe(true);
    expect(isDashboardPage('POST', `${repo}/tests/8d3f/flag`)).toBe(true);
  });

  it('takes nothing else for a page', () => {
    for (const url of [
      '/',
      '/favicon.ico',
      '/robots.txt',
      '/.env',
      '/wp-login.php',
      '/v1',
      '/V1',
      '/-acme',
      '/acme-',
      '/ac_me',
      `/${'a'.repeat(65)}`,
      '/%E0%A4%A',
      '/acme/settings',
      '/acme/repos',
      '/acme/repos/github.com/acme',
      '/acme//repos',
      '/acme/flaky-tests/test',
      '/acme/flaky-tests/x/8d3f',
      '/acme/flaky-tests/test/8d3f/more',
      '/favicon.ico/repos/github.com/acme/web',
    ]) {
      expect(isDashboardPage('GET', url), url).toBe(false);
    }
    // Methods: the overview and the pages are read; only the two forms are posted.
    expect(isDashboardPage('POST', '/acme')).toBe(false);
    expect(isDashboardPage('POST', repo)).toBe(false);
    expect(isDashboardPage('DELETE', `${repo}/tests/8d3f/flag`)).toBe(false);
    expect(isDashboardPage('POST', '/acme/flaky-tests/test/8d3f')).toBe(false);
  });
});
