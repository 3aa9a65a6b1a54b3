// Shared by the browser tests: where Chromium is, where screenshots go, the server and browser they
// drive, and the in-page measure of table cells.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { loadConfig } from '../../src/config.ts';
import { type Server, startServer } from '../../src/main.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { junitXml, multipart } from '../support/upload.ts';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
export const SKIP_REASON =
  'browser tests skipped: no Chromium executable at /usr/bin/chromium (apt-get install chromium)';

/**
 * Screenshots of every page, kept by CI as artifacts: `${MAINLINE_ARTIFACTS_DIR:-artifacts}/screenshots`,
 * a relative directory taken from the repository's root (.ci/run prints where they are).
 */
export const SCREENSHOTS = path.resolve(
  import.meta.dirname,
  '../..',
  process.env['MAINLINE_ARTIFACTS_DIR'] || 'artifacts',
  'screenshots',
);

/**
 * Whether the browser tests can run: false without a Chromium executable (they are then skipped),
 * except under CI (CI set), where that is an error. Makes the screenshots' directory.
 */
export function browserAvailable(): boolean {
  if (CHROMIUM === undefined) {
    if (process.env['CI']) throw new Error(`CI must run the browser tests: ${SKIP_REASON}`);
    return false;
  }
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  return true;
}

/** The real server a browser test drives, on a fresh database. */
export interface LoopbackServer {
  readonly url: string;
  readonly server: Server;
  readonly db: TestDatabase;
  close(): Promise<void>;
}

/**
 * Starts the server on a free loopback port with the organization `acme` and `token` as its bootstrap
 * token; rate limits, the health sweep and webhook delivery off. `env` adds to the configuration.
 */
export async function startLoopbackServer(
  token: string,
  env: Record<string, string> = {},
): Promise<LoopbackServer> {
  const db = await createTestDatabase();
  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = await startServer(
      loadConfig({
        ...db.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        MAINLINE_PUBLIC_URL: url,
        LOG_LEVEL: 'silent',
        MAINLINE_RATE_LIMIT: '0',
        MAINLINE_HEALTH_SWEEP_SECONDS: '0',
        MAINLINE_WEBHOOK_POLL_MS: '0',
        MAINLINE_BOOTSTRAP_ORG: 'acme',
        MAINLINE_BOOTSTRAP_TOKEN: token,
        ...env,
      }),
    );
    return {
      url,
      server,
      db,
      close: async () => {
        await server.close();
        await db.cleanup();
      },
    };
  } catch (error) {
    await db.cleanup();
    throw error;
  }
}

/** Uploads one JUnit report of `cases` with these multipart fields, as the uploader does; expects 200. */
export async function uploadReport(
  server: { readonly url: string },
  token: string,
  fields: Record<string, unknown>,
  cases: Parameters<typeof junitXml>[0],
): Promise<void> {
  const body = multipart(fields, [{ name: 'r.xml', content: junitXml(cases) }]);
  const res = await fetch(`${server.url}/v1/test-results/upload`, {
    method: 'POST',
    headers: { 'x-api-token': token, 'content-type': body.contentType },
    body: body.payload,
  });
  if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
}

/** Chromium with one page at 1280 × 900. */
export async function openBrowser(): Promise<{ browser: Browser; page: Page }> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  return { browser, page: await browser.newPage({ viewport: { width: 1280, height: 900 } }) };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Run in the page: every word of every table cell that sticks out of the cell's content box (the
 * cell is narrower than that word allows), every table wider than its scrolling box, the width of
 * each Status cell, and how much the page is wider than the screen.
 */
export const MEASURE = `(() => {
  const out = { words: [], tables: [], status: [] };
  for (const cell of document.querySelectorAll('main td, main th')) {
    const box = cell.getBoundingClientRect();
    const cs = getComputedStyle(cell);
    const left = box.left + parseFloat(cs.paddingLeft) - 1;
    const right = box.right - parseFloat(cs.paddingRight) + 1;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        for (const r of range.getClientRects()) {
          if (r.width > 0 && (r.left < left || r.right > right)) {
            out.words.push(m[0] + ' (' + Math.round(r.width) + ' px) in a cell of ' + Math.round(right - left) + ' px');
            break;
          }
        }
      }
    }
    if (cell.matches('td[data-label="Status"]')) out.status.push(Math.round(box.width));
  }
  for (const wrap of document.querySelectorAll('main .table-wrap')) {
    if (wrap.scrollWidth > wrap.clientWidth + 1) out.tables.push(wrap.scrollWidth + ' > ' + wrap.clientWidth);
  }
  out.overflow = document.documentElement.scrollWidth - window.innerWidth;
  return out;
})()`;

export interface Measure {
  words: string[];
  tables: string[];
  status: number[];
  overflow: number;
}
