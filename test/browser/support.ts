// Shared by the browser tests: where Chromium is, where screenshots go, and the in-page measure of
// table cells.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

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
