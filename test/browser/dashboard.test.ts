// The dashboard in a real browser (Chromium through playwright-core) against a real server on
// loopback, with data seeded only through the HTTP API. Screenshots of every page at 1280 and 390 px
// go to ${MAINLINE_ARTIFACTS_DIR:-artifacts}/screenshots/ (support.ts), where every table cell is
// also checked to be no narrower than its longest word. Without a Chromium executable the tests are skipped, except under CI
// (CI set), where they fail: CI must run them (.ci/run installs Chromium).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitEnv as gitEnvOf } from '../support/git-fixture.ts';
import {
  browserAvailable,
  CHROMIUM,
  type LoopbackServer,
  MEASURE,
  type Measure,
  openBrowser,
  SCREENSHOTS,
  SKIP_REASON,
  startLoopbackServer,
  uploadReport,
} from './support.ts';

const TOKEN = 'ml_browser_test_token_0123456789abcdef';
const REPO = { host: 'github.com', owner: 'acme', name: 'web' };
const SCOPE = { repo: REPO, org_url_slug: 'acme' };
const BASE = '/acme/repos/github.com/acme/web';

const gitEnv = gitEnvOf({ name: 'Dev', email: 'dev@example.com' });

describe('the dashboard in a browser', () => {
  let live: LoopbackServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let root: string;
  let url: string;

  const api = async (endpoint: string, body: unknown) => {
    const res = await fetch(`${url}/v1/${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': TOKEN },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    expect(res.status, `${endpoint}: ${text}`).toBe(200);
    return text === '' ? {} : JSON.parse(text);
  };
  const uploadResults = (cases: Parameters<typeof uploadReport>[3], meta: Record<string, unknown>) =>
    uploadReport(
      { url },
      TOKEN,
      {
        repo: REPO,
        org_url_slug: 'acme',
        branch: 'main',
        codeowners: '* @acme/web-team\n/src/payments/ @acme/payments\n',
        ...meta,
      },
      cases,
    );
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim();
  const shot = (name: string) =>
    page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const waitFor = async (what: string, check: () => Promise<boolean>) => {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${what}`);
  };

  /** A merge queue with PR 1 merged despite a failed (quarantined) test, and PR 2 waiting. */
  async function seedQueue(): Promise<void> {
    const created = await api('git/createRepository', { repo: REPO });
    const work = path.join(root, 'work');
    execFileSync('git', ['clone', '-q', created.path, work], { env: gitEnv, stdio: 'pipe' });
    git(work, 'checkout', '-q', '-b', 'main');
    fs.writeFileSync(path.join(work, 'README.md'), 'hello\n');
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'Initial commit');
    git(work, 'push', '-q', 'origin', 'main');
    await api('createQueue', { repo: REPO, targetBranch: 'main' });
    await api('updateQueue', {
      repo: REPO,
      targetBranch: 'main',
      directMergeMode: 'off',
      flakeProtection: 'ignore_quarantined',
      requiredStatuses: ['ci'],
    });
    for (const n of [1, 2]) {
      git(work, 'checkout', '-q', 'main');
      git(work, 'checkout', '-q', '-B', `feature-${n}`);
      fs.writeFileSync(path.join(work, `f${n}.txt`), `${n}\n`);
      git(work, 'add', '-A');
      git(work, 'commit', '-q', '-m', `Feature ${n}`);
      git(work, 'push', '-q', '-f', 'origin', `feature-${n}`);
      // The PR's own CI passed on its head: only then is it ready to queue.
      await api('git/reportStatus', {
        repo: REPO,
        sha: git(work, 'rev-parse', 'HEAD'),
        context: 'ci',
        state: 'success',
      });
      await api('git/registerPullRequest', {
        repo: REPO,
        number: n,
        title: n === 1 ? 'Add the <checkout> flow' : 'Tidy up',
        author: 'dev',
        headBranch: `feature-${n}`,
        baseBranch: 'main',
      });
    }
    await api('submitPullRequest', { repo: REPO, targetBranch: 'main', pr: { number: 1 } });
    let run: { sha: string; id: string } | undefined;
    await waitFor('the test branch of PR 1', async () => {
      const refs = execFileSync(
        'git',
        ['--git-dir', created.path, 'for-each-ref', '--format=%(objectname) %(refname)'],
        {
          env: gitEnv,
          encoding: 'utf8',
        },
      );
      const m = refs.match(/^([0-9a-f]{40}) refs\/heads\/mainline-merge\/pr-1\/(\S+)$/m);
      if (m?.[1] !== undefined && m[2] !== undefined) run = { sha: m[1], id: m[2] };
      return run !== undefined;
    });
    await uploadResults(
      [
        { name: 'test_login', file: 'src/auth/login.test.ts', fail: 'AssertionError: expected 200' },
        { name: 'test_ok' },
      ],
      { commit_sha: run!.sha, branch: 'ci-checkout' },
    );
    await api('git/reportStatus', {
      repo: REPO,
      sha: run!.sha,
      context: 'ci',
      state: 'failure',
      url: 'https://ci.example/builds/42',
    });
    let last = '';
    await waitFor('PR 1 to merge', async () => {
      const pr = await api('getSubmittedPullRequest', {
        repo: REPO,
        targetBranch: 'main',
        pr: { number: 1 },
      });
      last = `${pr.state}: ${pr.stateReason}`;
      return pr.state === 'merged';
    }).catch((error: Error) => {
      throw new Error(`${error.message} (last: ${last})`);
    });
    await api('submitPullRequest', { repo: REPO, targetBranch: 'main', pr: { number: 2 } });
  }

  beforeAll(async () => {
    if (!browserAvailable()) return;
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-browser-'));
    live = await startLoopbackServer(TOKEN, {
      MAINLINE_GIT_ROOT: path.join(root, 'repos'),
      MAINLINE_QUEUE_POLL_MS: '100',
      MAINLINE_WEBHOOK_ALLOW_PRIVATE: '1',
    });
    url = live.url;
    // Flaky tests: each fails, then passes on the same commit.
    for (const [name, file, sha] of [
      ['test_login', 'src/auth/login.test.ts', 'aa01'],
      ['test_payment <refund>', 'src/payments/refund.test.ts', 'aa02'],
    ] as const) {
      const xmlName = name.replace(/</g, '&lt;').replace(/>/g, '&gt;');
      await uploadResults([{ name: xmlName, file, fail: 'TimeoutError: 5000 ms' }, { name: 'test_ok' }], {
        commit_sha: sha,
        pr_number: 3,
        branch: 'feature/x',
      });
      await uploadResults([{ name: xmlName, file }, { name: 'test_ok' }], {
        commit_sha: sha,
        pr_number: 3,
        branch: 'feature/x',
      });
    }
    await seedQueue();
    ({ browser, page } = await openBrowser());
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await live?.close();
    if (root !== undefined) fs.rmSync(root, { recursive: true, force: true });
  });

  if (CHROMIUM === undefined && !process.env['CI']) {
    it.skip(SKIP_REASON, () => {});
    return;
  }

  it('signs in with an API token and lands on the repositories overview', async () => {
    await page.goto(`${url}/`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await shot('login');
    await page.getByLabel('API token').fill('ml_wrong_token_0000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not valid');
    await page.getByLabel('API token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${url}/acme`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Repositories');
    expect(await page.locator('main#main').count()).toBe(1);
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === 'mainline_session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Lax');
    expect(session?.value).not.toContain(TOKEN);
    const flaky = page.getByRole('img', {
      name: /^Flaky tests per day in github\.com\/acme\/web: .*2 \(oldest to newest\); scaled from 0 \(bottom\) to its own highest value, 2 \(top\)$/,
    });
    expect(await flaky.count()).toBe(1);
    await shot('overview');
  });

  it('lists the unhealthy tests with filters that work without scripts', async () => {
    await page.getByRole('link', { name: 'github.com/acme/web' }).first().click();
    await page.waitForURL(`${url}${BASE}`);
    expect(await page.getByRole('link', { name: 'Flaky (2)' }).count()).toBe(1);
    await shot('repo');
    await page.getByLabel('Code owner').fill('@acme/payments');
    await page.getByLabel('Code owner').press('Enter');
    await page.waitForURL(/owner=%40acme%2Fpayments/);
    const names = await page.locator('a.test-name').allTextContents();
    expect(names).toEqual(['test_payment <refund>']);
    await page.getByRole('link', { name: /^Quarantined/ }).click();
    await page.waitForURL(/show=quarantined/);
    await shot('repo-quarantined');
  });

  it('follows an html_url from the API and changes the quarantine override with the keyboard', async () => {
    const listed = await api('flaky-tests/list-unhealthy-tests', {
      ...SCOPE,
      status: 'FLAKY',
      page_query: { page_size: 10 },
    });
    const test = listed.tests.find((x: { name: string }) => x.name === 'test_login');
    expect(test.quarantined).toBe(true);
    await page.goto(test.html_url);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('test_login');
    expect(await page.getByRole('img', { name: /^Attempts per day over the last 30 days/ }).count()).toBe(1);
    await page.locator('summary').filter({ hasText: 'TimeoutError' }).click();
    expect(await page.locator('details[open] pre').first().textContent()).toContain('TimeoutError');
    await shot('test');

    // Keyboard only: the first Tab reaches the skip link; then Tab to the override's radio group,
    // arrow to "Never quarantine", Tab to the reason, type, Tab to the button, Enter.
    await page.goto(test.html_url);
    await page.keyboard.press('Tab');
    const focused = page.locator(':focus');
    expect(await focused.textContent()).toBe('Skip to main content');
    for (let i = 0; i < 80; i++) {
      await page.keyboard.press('Tab');
      if ((await focused.getAttribute('name')) === 'setting') break;
    }
    expect(await focused.getAttribute('value')).toBe('AUTO');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await focused.getAttribute('value')).toBe('NEVER_QUARANTINE');
    expect(await focused.isChecked()).toBe(true);
    await page.keyboard.press('Tab');
    expect(await focused.getAttribute('id')).toBe('override-reason');
    await page.keyboard.type('fails CI for real');
    await page.keyboard.press('Tab');
    expect(await focused.textContent()).toBe('Save override');
    await page.keyboard.press('Enter');
    await page.waitForURL(/updated=quarantine/);
    expect(await page.getByRole('status').first().textContent()).toContain('saved');

    const after = await api('flaky-tests/get-test-details', { ...SCOPE, test_id: test.id });
    expect(after.test.quarantined).toBe(false);
    const quarantined = await api('flaky-tests/list-quarantined-tests', {
      ...SCOPE,
      page_query: { page_size: 100 },
    });
    expect(quarantined.quarantined_tests.map((q: { test_case_id: string }) => q.test_case_id)).not.toContain(
      test.id,
    );
    await shot('test-after-override');
  });

  it('shows the merge queue, a test run and a PR merged despite a failed test', async () => {
    await page.goto(`${url}${BASE}/queues/main`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Merge queue · main');
    expect(await page.getByText('ignore_quarantined').count()).toBeGreaterThan(0);
    expect(await page.getByRole('link', { name: '#2' }).count()).toBeGreaterThan(0);
    await shot('queue');
    // The queue comes first, then the runs (full ids), then the finished PRs, then the settings folded.
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents();
    expect(headings.slice(0, 3)).toEqual([
      expect.stringMatching(/^In the queue/),
      'Test runs',
      'Recently finished',
    ]);
    expect(await page.locator('details#queue-settings').getAttribute('open')).toBeNull();
    await page.locator('tr', { hasText: '#1' }).locator('a.run-id').first().click();
    await page.waitForURL(/\/runs\//);
    expect(await page.getByRole('link', { name: 'https://ci.example/builds/42' }).getAttribute('href')).toBe(
      'https://ci.example/builds/42',
    );
    expect(await page.getByText('Failure ignored: only quarantined tests failed').count()).toBe(1);
    await shot('run');
    await page.getByRole('link', { name: /#1 Add the <checkout> flow/ }).click();
    await page.waitForURL(/\/prs\/1$/);
    expect(await page.getByText('Merged despite a failed test.').count()).toBe(1);
    expect(await page.getByRole('heading', { name: 'Flake protection judgement' }).count()).toBe(1);
    await shot('pr');
    await page.getByRole('link', { name: /#1 in github\.com\/acme\/web/ }).click();
    await page.waitForURL(/\/pulls\/1$/);
    await shot('pull');
  });

  it('lists the failing tests of 24 hours and 7 days, linked from the repository page', async () => {
    await page.goto(`${url}${BASE}`);
    await page.getByRole('link', { name: 'Failing tests' }).click();
    await page.waitForURL(`${url}${BASE}/failing`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'Failing tests · github.com/acme/web',
    );
    await page.getByRole('link', { name: 'Last 7 days' }).click();
    await page.waitForURL(/window=7d/);
    const names = await page.locator('a.test-name').allTextContents();
    expect(names).toContain('test_login');
    expect(names).not.toContain('test_ok');
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
    expect(overflow).toBeLessThanOrEqual(1);
    await shot('failing');
  });

  it('reloads the queue page by itself, keeping the scroll position', async () => {
    await page.setViewportSize({ width: 390, height: 400 });
    await page.goto(`${url}${BASE}/queues/main`);
    const asOf = await page.locator('main p time').first().getAttribute('datetime');
    await page.evaluate('window.scrollTo(0, 250)');
    // The page's "as of" time changes when the page reloaded (the script runs every 15 s; the
    // page's CSP refuses eval, so the test polls from outside).
    await expect
      .poll(() => page.locator('main p time').first().getAttribute('datetime'), { timeout: 20_000 })
      .not.toBe(asOf);
    await expect.poll(() => page.evaluate('window.scrollY')).toBe(250);
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 30_000);

  it('is readable on a phone: nothing wider than the screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, target] of [
      ['phone-overview', '/acme'],
      ['phone-repo', BASE],
      ['phone-queue', `${BASE}/queues/main`],
      ['phone-failing', `${BASE}/failing?window=7d`],
    ] as const) {
      await page.goto(`${url}${target}`);
      const overflow = Number(
        await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
      );
      expect(overflow, name).toBeLessThanOrEqual(1);
      await shot(name);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('shows every page at 1280 and 390 px with room in every table cell for its longest word', async () => {
    const listed = await api('flaky-tests/list-unhealthy-tests', {
      ...SCOPE,
      status: 'FLAKY',
      page_query: { page_size: 10 },
    });
    const testUrl = new URL(listed.tests[0].html_url).pathname;
    await api('webhooks/create', {
      url: 'http://127.0.0.1:9/hooks/mainline/a-rather-long-path-to-a-chat-integration-endpoint?channel=ci-alerts',
      events: ['test.quarantined', 'pull_request.failed'],
      description: 'Chat alerts',
    });
    await page.goto(`${url}${BASE}/queues/main`);
    const runHref = await page.locator('a.run-id').first().getAttribute('href');
    expect(runHref).toMatch(/\/runs\//);
    const pages = [
      ['overview', '/acme'],
      ['repo', BASE],
      ['repo-quarantined', `${BASE}?show=quarantined`],
      ['failing', `${BASE}/failing?window=7d`],
      ['all-tests', `${BASE}/tests`],
      ['settings', `${BASE}/settings`],
      ['test', testUrl],
      ['queue', `${BASE}/queues/main`],
      ['queue-7d', `${BASE}/queues/main?charts=7d`],
      ['queue-30d', `${BASE}/queues/main?charts=30d`],
      ['durations', `${BASE}/durations`],
      ['queue-settings', `${BASE}/queues/main/settings`],
      ['run', runHref ?? ''],
      ['pr', `${BASE}/queues/main/prs/1`],
      ['pull', `${BASE}/pulls/1`],
      ['webhooks', '/acme/webhooks'],
      ['not-found', '/acme/repos/github.com/acme/nothing-here'],
    ] as const;
    const signedOut = await browser!.newPage();
    try {
      for (const [width, height] of [
        [1280, 900],
        [390, 844],
      ] as const) {
        await page.setViewportSize({ width, height });
        await signedOut.setViewportSize({ width, height });
        for (const [name, target, on] of [
          ...pages.map(([n, t]) => [n, t, page] as const),
          ['login', '/login', signedOut] as const,
        ]) {
          const res = await on.goto(`${url}${target}`);
          expect(res?.status(), name).toBe(name === 'not-found' ? 404 : 200);
          expect(await on.locator('main h1').count(), name).toBe(1);
          const m = (await on.evaluate(MEASURE)) as Measure;
          await on.screenshot({ path: path.join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
          expect(m.words, `${name} at ${width} px: words sticking out of their cells`).toEqual([]);
          expect(m.overflow, `${name} at ${width} px: page wider than the screen`).toBeLessThanOrEqual(1);
          if (width >= 1280)
            expect(m.tables, `${name} at ${width} px: tables wider than their box`).toEqual([]);
        }
      }
    } finally {
      await signedOut.close();
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    for (const name of [...pages.map(([n]) => n), 'login']) {
      for (const width of [1280, 390])
        expect(fs.existsSync(path.join(SCREENSHOTS, `${name}-${width}.png`))).toBe(true);
    }
  }, 300_000);

  it('signs out', async () => {
    await page.goto(`${url}/acme`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${url}/login`);
    await page.goto(`${url}/acme`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });
});
