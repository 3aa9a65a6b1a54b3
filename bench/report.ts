// Renders the figures: aligned text tables on stdout and the same as markdown in docs/benchmarks.md.
// Text between the notes markers of an existing file is kept, so a hand-written reading survives
// a new run.
import fs from 'node:fs';
import path from 'node:path';
import { fmt, type Params, ROOT } from './common.ts';
import type { ContentionReport } from './contention.ts';
import { AFTER_UPLOAD, CASES, FAIL_EVERY, WARMUP } from './dashboard-upload.ts';
import type { IngestReport, SmallIngestReport } from './ingest.ts';
import type { LoadResult, WindowStats } from './load.ts';
import type { EngineReads, ReadsReport } from './reads.ts';
import { sequentialBudgetSeconds } from './sequential.ts';
import { FLAT_GROWTH, FLOOR_SAMPLES, type SoakReport, type Trend } from './soak.ts';

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly sqlite: string;
  readonly postgres: string;
}

export interface RunReport {
  readonly date: string;
  readonly command: string;
  readonly machine: Machine;
  readonly params: Params;
  readonly seconds: number;
  /** 1-minute load average before and after the run: other work on the machine skews the figures. */
  readonly load: { readonly before: number; readonly after: number };
  readonly ingest?: IngestReport | undefined;
  /** Part small: 5,000-case reports sustained. */
  readonly small?: SmallIngestReport | undefined;
  readonly reads?: ReadsReport | undefined;
  readonly skipped: string[];
}

type Table = { head: string[]; rows: string[][] };

function markdown(t: Table): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(t.head), line(t.head.map((_, i) => (i === 0 ? '---' : '---:'))), ...t.rows.map(line)].join(
    '\n',
  );
}

function text(t: Table): string {
  const widths = t.head.map((h, i) => Math.max(h.length, ...t.rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(t.head), widths.map((w) => '-'.repeat(w)).join('  '), ...t.rows.map(line)].join('\n');
}

function ingestTable(ingest: Pick<IngestReport, 'rows'>): Table {
  return {
    head: [
      'step',
      'engine',
      'seconds',
      'test cases/s',
      'ratio to bare saxes',
      'bare saxes s (same moment)',
      'CPU s per report (request thread)',
      'CPU ÷ bare saxes CPU',
      'server peak RSS',
    ],
    rows: ingest.rows.map((r) => [
      r.label,
      r.engine,
      fmt.s(r.seconds),
      fmt.int(r.casesPerSecond),
      fmt.ratio(r.ratio),
      r.baseSeconds === undefined ? '' : fmt.s(r.baseSeconds),
      r.cpu === undefined ? '' : `${fmt.s(r.cpu)}${r.mainCpu === undefined ? '' : ` (${fmt.s(r.mainCpu)})`}`,
      r.cpuRatio === undefined ? '' : fmt.ratio(r.cpuRatio),
      r.peakRss === undefined ? '' : fmt.mb(r.peakRss),
    ]),
  };
}

/** The same-bytes columns of a read (issue 25), when its answers were served again from memory. */
const SAME_HEAD = [
  'answer bytes',
  'same-bytes req/s',
  'req/s ÷ same bytes',
  'same-bytes p99 ms (seq)',
  'p99 (seq) ÷ same bytes',
];

function sameCells(r: LoadResult): string[] {
  const s = r.same;
  if (s === undefined) return ['', '', '', '', ''];
  return [
    fmt.int(r.bytes ?? Number.NaN),
    fmt.int(s.rps),
    fmt.ratio(r.rps / s.rps),
    fmt.ms(s.seq.p99),
    fmt.ratio(r.seq.p99 / s.seq.p99),
  ];
}

function readRow(r: LoadResult, base: LoadResult, same = false): string[] {
  return [...readCells(r, base), ...(same ? sameCells(r) : [])];
}

function readCells(r: LoadResult, base: LoadResult): string[] {
  return [
    r.name,
    fmt.int(r.rps),
    fmt.ratio(r.rps / base.rps),
    fmt.int(r.p50),
    fmt.int(r.p99),
    fmt.ms(r.seq.p50),
    fmt.ratio(r.seq.p50 / base.seq.p50),
    fmt.ms(r.seq.p99),
    fmt.ratio(r.seq.p99 / base.seq.p99),
    fmt.ms(r.seq.max),
    fmt.int(r.seq.n),
    String(r.failed),
  ];
}

const READ_HEAD = [
  'request',
  'req/s',
  'req/s ÷ baseline',
  'p50 ms (load)',
  'p99 ms (load)',
  'p50 ms (seq)',
  'p50 (seq) ÷ baseline',
  'p99 ms (seq)',
  'p99 (seq) ÷ baseline',
  'max ms (seq)',
  'n (seq)',
  'non-2xx',
];

const WRK_HEAD = [
  'request',
  'wrk req/s',
  'req/s ÷ baseline',
  'wrk p50 ms',
  'p50 ÷ baseline',
  'wrk p90 ms',
  'wrk p99 ms',
  'p99 ÷ baseline',
  'wrk max ms',
  'non-2xx/errors',
];

const WRK_SAME_HEAD = ['same-bytes wrk req/s', 'req/s ÷ same bytes', 'same-bytes wrk p99 ms'];

function wrkRow(r: LoadResult, base: LoadResult, same = false): string[] | undefined {
  const w = r.wrk;
  const b = base.wrk;
  if (w === undefined || b === undefined) return undefined;
  const sw = r.same?.wrk;
  const sameCols = !same
    ? []
    : sw === undefined
      ? ['', '', '']
      : [fmt.int(sw.rps), fmt.ratio(w.rps / sw.rps), fmt.ms(sw.p99)];
  return [...wrkCells(w, b, r.name), ...sameCols];
}

function wrkCells(
  w: NonNullable<LoadResult['wrk']>,
  b: NonNullable<LoadResult['wrk']>,
  name: string,
): string[] {
  const r = { name };
  return [
    r.name,
    fmt.int(w.rps),
    fmt.ratio(w.rps / b.rps),
    fmt.ms(w.p50),
    fmt.ratio(w.p50 / b.p50),
    fmt.ms(w.p90),
    fmt.ms(w.p99),
    fmt.ratio(w.p99 / b.p99),
    fmt.ms(w.max),
    String(w.failed),
  ];
}

const engineTitle = (e: string) => (e === 'sqlite' ? 'SQLite' : 'PostgreSQL');
const shapeTitle = (e: EngineReads) =>
  `${engineTitle(e.engine)}${e.shape === 'day' ? ', all history inside one day' : ''}`;

/** The read tables of these engines' runs (the spread's, or the one-day shape's). */
function readTables(
  reads: ReadsReport,
  which: 'spread' | 'day' = 'spread',
): { title: string; table: Table }[] {
  const base = reads.baseline;
  if (base === undefined) return [];
  const engines = which === 'day' ? (reads.day ?? []) : reads.engines;
  const out =
    which === 'day' ? [] : [{ title: 'Baseline', table: { head: READ_HEAD, rows: [readRow(base, base)] } }];
  for (const e of engines) {
    if (e.results.length === 0) continue;
    const same = e.results.some((r) => r.same !== undefined);
    out.push({
      title: shapeTitle(e),
      table: {
        head: same ? [...READ_HEAD, ...SAME_HEAD] : READ_HEAD,
        rows: e.results.map((r) => readRow(r, base, same)),
      },
    });
  }
  if (base.wrk === undefined) return out;
  const baseRow = wrkRow(base, base);
  if (which !== 'day')
    out.push({
      title: 'Baseline (wrk)',
      table: { head: WRK_HEAD, rows: baseRow === undefined ? [] : [baseRow] },
    });
  for (const e of engines) {
    const same = e.results.some((r) => r.same?.wrk !== undefined);
    const rows = e.results.map((r) => wrkRow(r, base, same)).filter((r): r is string[] => r !== undefined);
    if (rows.length === 0) continue;
    out.push({
      title: `${shapeTitle(e)} (wrk)`,
      table: { head: same ? [...WRK_HEAD, ...WRK_SAME_HEAD] : WRK_HEAD, rows },
    });
  }
  return out;
}

/** What the rows ending AFTER_UPLOAD measure, when these engines' runs have any. */
function afterUploadNote(engines: readonly EngineReads[]): string[] {
  if (!engines.some((e) => e.results.some((r) => r.name.endsWith(AFTER_UPLOAD)))) return [];
  return [
    `Rows ending “${AFTER_UPLOAD.slice(2)}”: each sample uploads one ${CASES}-case JUnit report of the main repository’s tests through the upload API ` +
      `(one test in ${FAIL_EVERY} failing, with a message no other upload has), waits for its answer, then times one GET of the page (the timing covers only the GET), ` +
      'from the bench process, one at a time. Every upload bumps the repository’s health/read version, which drops the answers the server kept for the page, ' +
      `so each GET is the first view of new results. The first ${WARMUP} samples of a row are not counted; non-2xx also counts test pages that did not show the upload’s failure.`,
  ];
}

function windowCells(w: WindowStats): string[] {
  return [fmt.int(w.rps), fmt.ms(w.p50), fmt.ms(w.p99), fmt.ms(w.max)];
}

function contentionTable(reports: readonly ContentionReport[]): Table {
  const rows: string[][] = [];
  for (const c of reports) {
    const alone = c.readsAlone;
    rows.push([
      `${c.engine}: list-unhealthy-tests page 1 alone`,
      '',
      '',
      ...windowCells(alone),
      '1.00',
      String(alone.failed),
    ]);
    rows.push([`${c.engine}: upload alone`, fmt.s(c.uploadAlone), '1.00', '', '', '', '', '', '']);
    rows.push([
      `${c.engine}: upload + list-unhealthy-tests page 1`,
      fmt.s(c.uploadDuring),
      fmt.ratio(c.uploadDuring / c.uploadAlone),
      ...windowCells(c.readsDuring),
      fmt.ratio(c.readsDuring.p99 / alone.p99),
      String(c.readsDuring.failed),
    ]);
  }
  return {
    head: [
      'measurement',
      'upload s',
      'upload ÷ alone',
      'reads/s',
      'read p50 ms',
      'read p99 ms',
      'read max ms',
      'read p99 ÷ alone',
      'non-2xx',
    ],
    rows,
  };
}

const pct = (f: number) => (Number.isFinite(f) ? `${(f * 100).toFixed(1)}%` : 'n/a');

function soakTable(soak: SoakReport): Table {
  const row = (name: string, t: Trend) => [
    name,
    fmt.mb(t.start),
    fmt.mb(t.end),
    fmt.mb(t.max),
    Number.isFinite(t.slopeMBPerMinute) ? t.slopeMBPerMinute.toFixed(2) : 'n/a',
    pct(t.growthSecondHalf),
    t.verdict,
  ];
  return {
    head: ['server memory', 'start', 'end', 'max', 'MB/min (2nd half)', 'growth (2nd half)', 'verdict'],
    rows: [
      row('RSS (VmRSS)', soak.rss),
      row(`V8 heap used, floor (lowest of the last ${FLOOR_SAMPLES} samples)`, soak.heapFloor),
    ],
  };
}

function soakSummary(soak: SoakReport): string {
  const mb = (b: number) => (b / 1048576).toFixed(0);
  return (
    `${soak.engine}, ${Math.round(soak.seconds)} s: reads ${fmt.int(soak.reads.n)} (${fmt.int(soak.reads.rps)}/s, ` +
    `p50 ${fmt.ms(soak.reads.p50)} ms, p99 ${fmt.ms(soak.reads.p99)} ms, max ${fmt.ms(soak.reads.max)} ms, ` +
    `${soak.reads.failed} non-2xx); uploads ${soak.uploads.n} of ${soak.uploadCases} test cases ` +
    `(p50 ${fmt.ms(soak.uploads.p50)} ms, p99 ${fmt.ms(soak.uploads.p99)} ms, ${soak.uploads.failed} failed). ` +
    `RSS MB every ${soak.sampleSeconds} s: ${soak.samples.map((x) => mb(x.rss)).join(', ')}. ` +
    `Heap used MB: ${soak.samples.map((x) => mb(x.heapUsed)).join(', ')}.`
  );
}

/** Issue 25's read goals, row by row: throughput ≥ 0.5× the same-bytes route, p99 ≤ 10 ms one at a time. */
function goalsTable(reads: ReadsReport, connections: number): Table {
  const rows: string[][] = [];
  for (const e of [...reads.engines, ...(reads.day ?? [])]) {
    for (const r of e.results) {
      const same = r.same;
      if (same === undefined) continue;
      const wrk = r.wrk !== undefined && same.wrk !== undefined;
      const ratio = wrk ? (r.wrk?.rps ?? Number.NaN) / (same.wrk?.rps ?? Number.NaN) : r.rps / same.rps;
      const throughputMet = ratio >= 0.5;
      const latencyMet = r.seq.p99 <= 10;
      rows.push([
        e.shape === 'day' ? 'one day' : '30 days',
        e.engine,
        r.name,
        `${fmt.ratio(ratio)} (${wrk ? 'wrk' : 'autocannon'}, ${connections} conn.)`,
        throughputMet ? 'met' : 'missed',
        fmt.ms(r.seq.p99),
        latencyMet ? 'met' : 'missed',
      ]);
    }
  }
  return {
    head: ['shape', 'engine', 'request', 'req/s ÷ same bytes', '≥ 0.5', 'p99 ms (seq)', '≤ 10 ms'],
    rows,
  };
}

/** Lines saying which of issue 25's goals this run met. */
function issue25Verdicts(report: RunReport): string[] {
  const out: string[] = [];
  const reads = report.reads;
  if (reads !== undefined) {
    const t = goalsTable(reads, report.params.connections);
    for (const shape of ['30 days', 'one day']) {
      for (const engine of ['sqlite', 'postgres']) {
        const rows = t.rows.filter((r) => r[0] === shape && r[1] === engine);
        if (rows.length === 0) continue;
        const both = rows.filter((r) => r[4] === 'met' && r[6] === 'met').length;
        const missed = rows.filter((r) => r[4] !== 'met' || r[6] !== 'met').map((r) => r[2]);
        out.push(
          `Reads, history over ${shape}, ${engineTitle(engine)}: ${both} of ${rows.length} read rows meet both goals (≥ 0.5× the same-bytes route, p99 ≤ 10 ms one at a time)` +
            (missed.length === 0 ? '.' : `; missed: ${missed.join('; ')}.`),
        );
      }
    }
  }
  for (const r of report.small?.rows ?? []) {
    if (r.engine === '-') continue;
    out.push(
      `Small reports (${r.label}) on ${engineTitle(r.engine)}: ${fmt.int(r.casesPerSecond)} test cases/s, ${fmt.ratio(r.ratio)}× a bare saxes parse of the same bytes — ${r.ratio >= 0.5 ? 'met' : 'missed'} (goal ≥ 0.5).`,
    );
  }
  return out;
}

/** The plain-text report printed on stdout. */
export function renderText(report: RunReport): string {
  const parts: string[] = [];
  if (report.ingest !== undefined) {
    const g = report.ingest.report;
    parts.push(
      `Ingest: ${g.testcases} test cases, ${(g.bytes / 1024 / 1024).toFixed(1)} MB`,
      text(ingestTable(report.ingest)),
    );
  }
  if (report.small !== undefined) {
    const g = report.small.report;
    parts.push(
      `Small reports: ${g.testcases} test cases, ${(g.bytes / 1024).toFixed(0)} KB, ${report.small.uploads} uploads sustained`,
      text(ingestTable(report.small)),
    );
  }
  if (report.reads !== undefined) {
    for (const t of [...readTables(report.reads), ...readTables(report.reads, 'day')])
      parts.push(`Reads: ${t.title}`, text(t.table));
    parts.push(...afterUploadNote([...report.reads.engines, ...(report.reads.day ?? [])]));
    const goals = goalsTable(report.reads, report.params.connections);
    if (goals.rows.length > 0) parts.push('Issue 25 read goals', text(goals));
    if (report.params.wrk === undefined) parts.push(`wrk: ${report.params.wrkMissing}; autocannon only`);
    const contention = report.reads.engines.flatMap((e) => e.contention ?? []);
    if (contention.length > 0)
      parts.push('Ingestion under concurrent reads', text(contentionTable(contention)));
    for (const e of report.reads.engines) {
      if (e.soak === undefined) continue;
      parts.push(`Soak: ${soakSummary(e.soak)}`, text(soakTable(e.soak)));
    }
  }
  parts.push([...verdicts(report), ...issue25Verdicts(report)].map((v) => `- ${v}`).join('\n'));
  if (report.skipped.length > 0) parts.push(report.skipped.map((s) => `skipped: ${s}`).join('\n'));
  return `\n${parts.join('\n\n')}\n`;
}

function verdicts(report: RunReport): string[] {
  const out: string[] = [];
  const ingest = report.ingest;
  if (ingest !== undefined) {
    const parse = ingest.rows.find((r) => r.label === 'parseJunitFile');
    if (parse !== undefined) {
      out.push(
        `Ingest goal (≥ 0.5 of a bare saxes parse): parseJunitFile alone reaches ${fmt.ratio(parse.ratio)} — ${parse.ratio >= 0.5 ? 'met' : 'missed'}.`,
      );
    }
    // End to end, per engine: a suite's uploads after its first (known, sustained, after history),
    // and the first upload of never-seen tests on its own.
    for (const engine of [...new Set(ingest.rows.map((r) => r.engine))].filter((e) => e !== '-')) {
      const rows = ingest.rows.filter((r) => r.engine === engine && r.label !== 'upload, all tests new');
      if (rows.length > 0) {
        const worst = Math.min(...rows.map((u) => u.ratio));
        const best = Math.max(...rows.map((u) => u.ratio));
        out.push(
          `End-to-end ingestion on ${engine} (uploads through HTTP into the database of a suite uploaded before: one at a time, sustained, after history): ${fmt.ratio(worst)}–${fmt.ratio(best)} of the bare parse — ${worst >= 0.5 ? 'met' : 'missed'}.`,
        );
      }
      const first = ingest.rows.find((r) => r.engine === engine && r.label === 'upload, all tests new');
      if (first !== undefined)
        out.push(
          `First upload of a suite whose ${fmt.int(ingest.report.testcases)} tests are all new, on ${engine}: ${fmt.ratio(first.ratio)} of the bare parse — ${first.ratio >= 0.5 ? 'met' : 'missed'}; it inserts a row per test (with the test table's indexes), once per suite.`,
        );
    }
    const known = ingest.rows.filter(
      (r) => r.label === 'upload again, tests known' && r.cpuRatio !== undefined,
    );
    for (const r of known) {
      out.push(
        `CPU budget on ${r.engine}: a known-suite upload used ${fmt.ratio(r.cpuRatio ?? Number.NaN)}x the bare parse's CPU (request thread ${fmt.ratio(((r.mainCpu ?? Number.NaN) / (r.cpu ?? Number.NaN)) * (r.cpuRatio ?? Number.NaN))}x); ` +
          'on 2 cores, with the client on the same machine, a ratio of 0.5 needs it below about 3x.',
      );
    }
    for (const r of ingest.rows.filter((row) => row.label.includes('in flight'))) {
      out.push(
        `Sustained ingestion (${r.label}) on ${r.engine}: ${fmt.ratio(r.ratio)} of the bare parse — ${r.ratio >= 0.5 ? 'met' : 'missed'} if the goal is read as the server's throughput.`,
      );
    }
    for (const r of ingest.rows.filter((row) => row.label.includes('stored before'))) {
      const first = ingest.rows.find(
        (row) => row.engine === r.engine && row.label === 'upload again, tests known',
      );
      const growth =
        first === undefined ? '' : ` (${(r.seconds / first.seconds).toFixed(1)}x the second upload's time)`;
      out.push(
        `History (${r.label}) on ${r.engine}: ${fmt.s(r.seconds)} s${growth}, ${fmt.ratio(r.ratio)} of the bare parse.`,
      );
    }
  }
  const sqlite = report.reads?.engines.find((e) => e.engine === 'sqlite');
  if (sqlite !== undefined) {
    const pages = sqlite.results.filter((r) => r.name.startsWith('list-unhealthy-tests'));
    for (const p of pages) {
      const met = p.seq.p99 <= 10;
      out.push(
        `SQLite goal (p99 ≤ 10 ms for a page): ${p.name}: p99 ${fmt.ms(p.seq.p99)} ms one request at a time — ${met ? 'met' : 'missed'}; p99 ${fmt.ms(p.p99)} ms with ${report.params.connections} concurrent connections.`,
      );
    }
  }
  for (const e of report.reads?.engines ?? []) {
    for (const p of e.results.filter((r) => r.name.startsWith('dashboard: '))) {
      out.push(
        `${engineTitle(e.engine)} dashboard goal (p99 ≤ 50 ms): ${p.name}: p99 ${fmt.ms(p.seq.p99)} ms — ${p.seq.p99 <= 50 ? 'met' : 'missed'}.`,
      );
    }
  }
  for (const e of report.reads?.engines ?? []) {
    const c = e.contention;
    if (c !== undefined) {
      out.push(
        `${engineTitle(c.engine)}, ingestion under reads: the ${fmt.int(c.cases)}-case upload took ${fmt.s(c.uploadDuring)} s with ` +
          `${c.connections} connections reading list-unhealthy-tests (${fmt.s(c.uploadAlone)} s alone, ×${fmt.ratio(c.uploadDuring / c.uploadAlone)}); ` +
          `read p50 ${fmt.ms(c.readsAlone.p50)} → ${fmt.ms(c.readsDuring.p50)} ms, p99 ${fmt.ms(c.readsAlone.p99)} → ${fmt.ms(c.readsDuring.p99)} ms, ` +
          `max ${fmt.ms(c.readsDuring.max)} ms during the upload` +
          (c.engine === 'sqlite'
            ? ' (SQLite writes in the server’s event loop: a read that arrives during the upload’s transaction waits for it).'
            : '.'),
      );
    }
  }
  for (const e of report.reads?.engines ?? []) {
    const soak = e.soak;
    if (soak !== undefined) {
      out.push(
        `Soak (${engineTitle(soak.engine)}, ${soak.seconds >= 120 ? `${Math.round(soak.seconds / 60)} min` : `${Math.round(soak.seconds)} s`} of mixed load): RSS ${fmt.mb(soak.rss.start)} → ${fmt.mb(soak.rss.end)} (max ${fmt.mb(soak.rss.max)}), ` +
          `${Number.isFinite(soak.rss.slopeMBPerMinute) ? soak.rss.slopeMBPerMinute.toFixed(2) : 'n/a'} MB/min over the second half, growth ${pct(soak.rss.growthSecondHalf)} — ` +
          `${soak.rss.verdict}${soak.rss.verdict === 'too short' ? ' (fewer than 3 samples in the second half)' : ` (flat: under ${FLAT_GROWTH * 100}% over the second half)`}; ` +
          `V8 heap floor ${fmt.mb(soak.heapFloor.start)} → ${fmt.mb(soak.heapFloor.end)}, ${soak.heapFloor.verdict}.`,
      );
    }
  }
  return out;
}

/** How to run it again: the commands and the environment knobs (written into the markdown). */
export const REPRODUCE = `## Reproduce

\`npm run bench\` runs bench/run.ts (ingestion, reads, ingestion under reads, soak) and then bench/queue-main.ts
(the merge-queue simulation, docs/benchmarks-queue.md). Needs PostgreSQL at \`DATABASE_URL\` (an admin
connection; default \`postgres://postgres@127.0.0.1:5432/postgres\`: the bench creates the database
\`mainline_bench\`, and \`mainline_bench_scratch\` while it runs), git, and wrk on PATH for the wrk tables.
A full run writes this file; a smaller one writes \`$BENCH_CACHE_DIR/benchmarks.md\` unless BENCH_DOCS says
otherwise. Seeded databases are cached (BENCH_CACHE_DIR, and schemas \`seed_*\` of \`mainline_bench\`) for 48 h and
left as seeded: every run works on a copy. A run at another BENCH_SCALE replaces the cached seed.

\`\`\`sh
npm run bench   # full scale: about 35 min (+6 to seed a cold cache), then the queue simulation (3 min)
BENCH_ONLY=reads BENCH_ENGINES=sqlite node --import tsx bench/run.ts   # one part, one engine, no queue simulation
BENCH_SCALE=0.02 BENCH_DURATION=2 BENCH_SEQUENTIAL=50 BENCH_SOAK_SECONDS=30 \\
  BENCH_DOCS=/tmp/bench-check.md node --import tsx bench/run.ts   # a check of the bench itself, about 5 min
BENCH_ONLY=small,day BENCH_DAY_SCALE=0.1 BENCH_DOCS=docs/benchmarks.md BENCH_DOCS_SECTION=1 \\
  node --import tsx bench/run.ts   # issue 25's parts only, written into their section of this file
\`\`\`

| variable | default | what |
| --- | --- | --- |
| BENCH_SCALE | 1 | data size: 100k-case upload, 200k test cases / 5M results to read (+ a tenth in a second organization) |
| BENCH_ONLY | ingest,reads,contention,soak,small,day | parts to run (small: 5,000-case reports sustained; day: the reads on history all inside one day) |
| BENCH_DAY_SCALE | BENCH_SCALE | size of the one-day shape: 200k test cases / 5M results at 1 |
| BENCH_SMALL_CASES | 5000 | test cases of each small report (about 200 bytes each) |
| BENCH_SMALL_UPLOADS | 20 | small reports of the sustained row, two in flight |
| BENCH_SAME_BYTES | 1 | 0: no second baseline (the same response bytes served from memory by a bare route) |
| BENCH_FROM_SOURCES | | 1: the server runs the TypeScript sources (tsx) instead of dist/ |
| BENCH_DOCS_SECTION | | 1: write only the issue-25 section into BENCH_DOCS, keeping the rest of the file |
| BENCH_ENGINES | sqlite,postgres | engines |
| BENCH_DURATION | 10 | seconds of each autocannon run and of each wrk run |
| BENCH_CONNECTIONS | 10 | connections of autocannon and wrk |
| BENCH_SEQUENTIAL | 500 | requests of each one-at-a-time loop |
| BENCH_INGEST_REPEAT | 5 | in-process parse repetitions (median) |
| BENCH_INGEST_HISTORY | 30 | uploads of the suite stored before the last measured upload (0 skips that row) |
| BENCH_WRK | wrk on PATH | wrk binary; 0 turns wrk off (autocannon only) |
| BENCH_WRK_THREADS | 1 | wrk threads |
| BENCH_READ_QUEUE_PRS | 40 | PRs of the merge queue built for the queue reads |
| BENCH_SOAK_SECONDS | 600 | soak length; 0 skips it |
| BENCH_SOAK_ENGINE | first engine | engine of the soak |
| BENCH_SOAK_RATE | 200 | reads per second during the soak (0: as fast as possible) |
| BENCH_SOAK_UPLOAD_CASES | 200 | test cases of the soak's upload each second |
| BENCH_SOAK_SAMPLE_SECONDS | 10 | memory sampling interval (a twentieth of a soak shorter than 200 s) |
| BENCH_CACHE_DIR | $TMPDIR/mainline-bench | generated files and seeded SQLite databases |
| BENCH_SEED_MAX_AGE_HOURS | 48 | older seeds are seeded again |
| BENCH_DOCS | docs/benchmarks.md on a full run | output file, or 0 |
| DATABASE_URL | postgres://postgres@127.0.0.1:5432/postgres | PostgreSQL admin connection |
| BENCH_QUEUE_* | | bench/queue-main.ts's (BENCH_QUEUE_DOCS=0 keeps docs/benchmarks-queue.md) |
`;

const SECTION_START = '<!-- issue25:start -->';
const SECTION_END = '<!-- issue25:end -->';

/**
 * Issue 25's section: the one-day shape's reads, the small reports, and every read against its
 * same-bytes route, with the goals each meets. A run of only these parts writes just this section
 * (BENCH_DOCS_SECTION=1), between its markers, into the file of a full run.
 */
export function renderSection(report: RunReport): string {
  const p = report.params;
  const out: string[] = [
    SECTION_START,
    '## Issue 25: history inside one day, small reports, same-bytes baselines',
    '',
    `Run on ${report.date} in ${Math.round(report.seconds)} s: \`${report.command}\` (parts ${p.parts.join(', ')}; engines ${p.engines.join(', ')}; ` +
      `${p.duration} s × ${p.connections} connections per request, ${p.sequential} sequential requests; load average ${report.load.before.toFixed(2)} before, ${report.load.after.toFixed(2)} after` +
      `${report.load.before > 1 ? ': other work was running, figures are pessimistic' : ''}).`,
    '',
    'The one-day shape: every result uploaded within the last day, in reports of about 5,000 test cases (40 shards plus the smoke tests), 3% of the tests flaky and failing half of their first attempts ' +
      'with stack traces that differ only in numbers, hex and paths (24 texts per failure kind: 23 that differ only in masked details, one failure group, and the 30-day shape’s text, another), 2% broken; ' +
      `${fmt.int(p.dayCases)} test cases and ${fmt.int(p.dayResults)} results in the main repository at BENCH_DAY_SCALE=${p.dayScale} (1 is the issue's 200,000 / 5,000,000). ` +
      'The same-bytes route: each read’s answers are captured from the real server after its measurement, then bench/baseline-server.ts serves them from memory for the same request bodies ' +
      '(the body is parsed as JSON, the answer picked by the raw body) and is measured with the same tools; its figures are the limit for a read.',
    '',
  ];
  const reads = report.reads;
  if (reads !== undefined) {
    for (const e of [...reads.engines, ...(reads.day ?? [])]) {
      if (e.results.length === 0) continue;
      const m = e.seeded.meta.main;
      out.push(
        `- ${shapeTitle(e)}: ${fmt.int(m.cases)} test cases (${fmt.int(m.flaky)} FLAKY, ${fmt.int(m.broken)} BROKEN), ${fmt.int(m.results)} results (${((100 * m.failed) / m.results).toFixed(1)}% failed), ` +
          `hot test ${fmt.int(m.hotResults)} results; ${e.seeded.cached ? 'reused' : 'seeded'} (seeding took ${Math.round(e.seeded.meta.seedSeconds)} s).`,
      );
    }
    out.push('');
    for (const t of readTables(reads, 'day')) out.push(`### ${t.title}`, '', markdown(t.table), '');
    for (const note of afterUploadNote(reads.day ?? [])) out.push(note, '');
    const goals = goalsTable(reads, p.connections);
    if (goals.rows.length > 0) out.push('### Read goals, row by row', '', markdown(goals), '');
  }
  if (report.small !== undefined) {
    const g = report.small.report;
    out.push(
      '### Small reports',
      '',
      `One generated report of ${fmt.int(g.testcases)} small test cases (${(g.bytes / 1024).toFixed(0)} KB, ${(g.bytes / g.testcases).toFixed(0)} bytes a test case, ${fmt.int(g.failures)} failures with a short trace), ` +
        `uploaded once (all tests new) to a fresh database, then 30 times to another repository there (two in flight: V8 optimises the upload path over the first 20–30 uploads of a process), then ${report.small.uploads} times for other commits, two in flight (the sustained row); each row against bare saxes parses of the same file taken at its moment (median of several).`,
      '',
      markdown(ingestTable(report.small)),
      '',
    );
  }
  out.push(
    '### Against issue 25’s goals',
    '',
    ...issue25Verdicts(report).map((v) => `- ${v}`),
    '',
    SECTION_END,
  );
  return out.join('\n');
}

/** Replaces the issue-25 section of `file` (or adds it before the goals of a full run's file). */
export function writeSection(report: RunReport, file: string): void {
  const section = renderSection(report);
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const a = old.indexOf(SECTION_START);
  const b = old.indexOf(SECTION_END);
  let next: string;
  if (a >= 0 && b > a) next = old.slice(0, a) + section + old.slice(b + SECTION_END.length);
  else {
    const at = old.indexOf('## Against the goals');
    next = at >= 0 ? `${old.slice(0, at)}${section}\n\n${old.slice(at)}` : `${old}\n${section}\n`;
  }
  // The Reproduce section is static text: brought up to date with the knobs this version has.
  const r = next.indexOf('## Reproduce');
  const end = next.indexOf('## Reading');
  if (r >= 0 && end > r) next = `${next.slice(0, r)}${REPRODUCE}\n${next.slice(end)}`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, next);
}

/** The issue-25 section an earlier run left in `file` (kept by a full run that ran none of its parts). */
function keptSection(file: string): string {
  if (!fs.existsSync(file)) return '';
  const old = fs.readFileSync(file, 'utf8');
  const a = old.indexOf(SECTION_START);
  const b = old.indexOf(SECTION_END);
  return a >= 0 && b > a ? old.slice(a, b + SECTION_END.length) : '';
}

const NOTES_START = '<!-- notes:start -->';
const NOTES_END = '<!-- notes:end -->';

function keptNotes(file: string): string {
  if (!fs.existsSync(file)) return '';
  const old = fs.readFileSync(file, 'utf8');
  const a = old.indexOf(NOTES_START);
  const b = old.indexOf(NOTES_END);
  return a >= 0 && b > a ? old.slice(a + NOTES_START.length, b).trim() : '';
}

export function renderMarkdown(report: RunReport, notes: string, section25 = ''): string {
  const m = report.machine;
  const p = report.params;
  const out: string[] = [
    '# Benchmarks',
    '',
    `Figures of \`npm run bench\` (bench/run.ts), run on ${report.date} in ${Math.round(report.seconds)} s. ` +
      'Every figure is also given as a ratio to a baseline measured in the same run, so runs on other machines compare.',
    '',
    '## Machine and command',
    '',
    `- CPU: ${m.cpu}, ${m.cores} cores; memory ${m.memoryGiB} GiB; ${m.os}`,
    `- Node ${m.node}; SQLite ${m.sqlite} (better-sqlite3, WAL); ${m.postgres}`,
    `- Command: \`${report.command}\``,
    `- 1-minute load average: ${report.load.before.toFixed(2)} before the run, ${report.load.after.toFixed(2)} after (the bench itself loads both cores)${report.load.before > 1 ? '; other work was running at the start: figures are pessimistic' : ''}`,
    `- Parameters: BENCH_SCALE=${p.scale}; ingest file ${fmt.int(p.ingestCases)} test cases; read data ${fmt.int(p.readCases)} test cases / ${fmt.int(p.readResults)} results (+ ${fmt.int(p.otherCases)} / ${fmt.int(p.otherResults)} in a second organization); autocannon ${p.duration} s × ${p.connections} connections per request; ${p.wrk === undefined ? `no wrk (${p.wrkMissing})` : `wrk ${p.duration} s × ${p.connections} connections, ${p.wrkThreads} thread(s), per request`}; ${p.sequential} sequential requests per request for the fine percentiles; merge queue of ${p.queuePrs} PRs; soak ${p.soakSeconds} s${p.soakSeconds > 0 ? ` on ${p.soakEngine ?? '-'} at ${p.soakRate > 0 ? `${p.soakRate} reads/s` : 'full speed'} + one ${p.soakUploadCases}-case upload a second, memory every ${p.soakSampleSeconds} s` : ' (skipped)'}.`,
    `- Parts: ${p.parts.join(', ')}.`,
    '- Server: `bin/mainline.mjs serve` as a child process, LOG_LEVEL=warn, MAINLINE_RATE_LIMIT=0, MAINLINE_HEALTH_SWEEP_SECONDS=0, merge-queue runner on (MAINLINE_QUEUE_POLL_MS default, 1 s); ' +
      `load generators (autocannon in the bench process${p.wrk === undefined ? '' : ', wrk as a process of its own'}) on the same 2 cores; loopback only.`,
    '',
  ];
  if (report.ingest !== undefined) {
    const g = report.ingest.report;
    out.push(
      '## Ingestion',
      '',
      `One generated JUnit file: ${fmt.int(g.testcases)} test cases in ${(g.bytes / 1024 / 1024).toFixed(1)} MB ` +
        `(${fmt.int(g.failures)} failures with stack traces, ${fmt.int(g.skipped)} skipped, ${fmt.int(g.flakyRetries)} flakyFailure retries, escaped characters). ` +
        `The baseline is saxes over the same file counting \`<testcase>\` tags; parse rows are the median of ${p.parseRepeat} runs in the bench process. ` +
        'The machine’s speed drifts (up to 2x within minutes), so each upload row is compared with bare parses of its own moment, run in the bench process once the machine is idle (its cores at most 5% busy for half a second): before each of the known-suite uploads (their median), before and after the other rows; the column shows that baseline. ' +
        'Uploads are multipart POSTs to a fresh database; the known-suite row is the median of three uploads of the same file for other commits, one at a time, so every test exists (the first of them also pays for the first upload’s aftermath: checkpointing its new rows, collecting its garbage); ' +
        'the time is from sending the request to the complete answer. Peak RSS is the server process’s VmHWM after the upload. ' +
        'CPU is user + system seconds per report-sized upload (sustained rows: divided by their uploads): the bench process’s for the parse rows, ' +
        'the server process’s for uploads, all its threads (request thread, parser thread, V8’s helper threads, the SQLite checkpoint thread), the request thread alone in brackets; on PostgreSQL the database server’s own CPU is not counted. ' +
        'The client (the bench process, on the same 2 cores) uses CPU too, so wall-clock ratios are below what the server alone would allow.',
      '',
      markdown(ingestTable(report.ingest)),
      '',
    );
  }
  const reads = report.reads;
  if (reads !== undefined) {
    out.push(
      '## Reads at scale',
      '',
      'Each engine’s seeded database is copied first (SQLite: the file; PostgreSQL: `create database … template mainline_bench`), ' +
        'and everything below runs on the copy, so the cached seed stays as seeded. On the copy, a merge queue is built through the API before the reads: ' +
        'a plain-git repository `git.local/acme/queue` in the same organization, its PRs submitted to a queue on main (single mode, concurrency 5, required status `bench`), ' +
        'and a stand-in CI that reports the status of the runs of the first half of the PRs (every 8th fails), so those merged or failed and the rest stays queued.',
      '',
    );
    for (const e of reads.engines) {
      const s = e.seeded.meta;
      const q = e.queue;
      out.push(
        `- ${e.engine}: ${fmt.int(s.main.cases)} test cases (${fmt.int(s.main.flaky)} FLAKY, ${fmt.int(s.main.broken)} BROKEN), ` +
          `${fmt.int(s.main.results)} results (${((100 * s.main.failed) / s.main.results).toFixed(1)}% failed) over 30 days; ` +
          `second organization ${fmt.int(s.other.cases)} / ${fmt.int(s.other.results)}. ` +
          `${e.seeded.cached ? 'Reused' : 'Seeded'} (seeding took ${Math.round(s.seedSeconds)} s; the copy ${fmt.s(e.copySeconds)} s). ` +
          `The list walk reached page ${e.laterPage + 1} of ${fmt.int(e.totalUnhealthy)} rows; the run wrote ${fmt.int(e.snapshotRows)} snapshot rows.` +
          (q === undefined
            ? e.queueProblem === undefined
              ? ''
              : ` Merge queue: not built (${e.queueProblem}), so no queue reads.`
            : ` Merge queue: ${q.prNumbers.length} PRs (${Object.entries(q.states)
                .map(([st, n]) => `${n} ${st}`)
                .join(', ')}), ${q.runIds.length} test runs, built in ${Math.round(q.seconds)} s.`),
      );
    }
    out.push(
      '',
      'Which tool produced which column: “load” columns are autocannon’s (in the bench process; whole milliseconds, so its latency ratios are not given; ' +
        'latency includes queueing behind the other connections). “seq” columns: one request at a time with `performance.now()` around each, after a warm-up, ' +
        'from a Node process of its own (bench/seq-client.mjs: nothing else on its heap) started once the machine is at rest (cores at most 5% busy for half a second) ' +
        `(client overhead included, as in the baseline; n is below ${p.sequential} where ${sequentialBudgetSeconds(p.duration)} s ran out). The` +
        ' “(wrk)” tables are wrk’s (`wrk --latency -s <script>`, a C load generator in a process of its own, ' +
        'microsecond latencies; the API is POST + JSON, so each request gets a Lua script that sets `wrk.method`, `wrk.headers` and `wrk.body`, ' +
        'or a `request()` that cycles through the bodies of an “in turn” row). Ratios are to the bare Fastify endpoint measured by the same tool in the same run.' +
        (report.params.wrk === undefined
          ? ` wrk was not used in this run: ${report.params.wrkMissing}; autocannon only.`
          : ''),
      '',
    );
    for (const t of readTables(reads)) out.push(`### ${t.title}`, '', markdown(t.table), '');
    for (const note of afterUploadNote(reads.engines)) out.push(note, '');
    const contention = reads.engines.flatMap((e) => e.contention ?? []);
    if (contention.length > 0) {
      const c0 = contention[0] as ContentionReport;
      out.push(
        '## Ingestion under concurrent reads',
        '',
        `On the same server and database copy as the reads: list-unhealthy-tests page 1 under autocannon (${c0.connections} connections) for ${p.duration} s alone; ` +
          `the ${fmt.int(c0.cases)}-case file (${c0.megabytes.toFixed(1)} MB) uploaded alone; then the same upload while the same read load runs. ` +
          'Each upload goes to a repository of its own (all its tests new), so the list being read does not change. ' +
          'Read latencies are autocannon’s per-answer times (sub-millisecond) of the requests sent while the upload was in flight.',
        '',
        markdown(contentionTable(contention)),
        '',
      );
    }
    for (const e of reads.engines) {
      const soak = e.soak;
      if (soak === undefined) continue;
      out.push(
        '## Soak',
        '',
        `One server (a fresh process on the database copy, after the parts above) for ${Math.round(soak.seconds)} s: ` +
          `${soak.readNames.length} reads in turn (${soak.readNames.join('; ')}) over ${soak.connections} connections at ` +
          `${soak.rate > 0 ? `${soak.rate} requests/s at most` : 'full speed'}, plus one ${soak.uploadCases}-case upload a second (a new commit each time). ` +
          `Every ${soak.sampleSeconds} s: the server's RSS (VmRSS of /proc/<pid>/status) and V8 heap (GET /metrics, \`mainline_nodejs_heap_size_used_bytes\`). ` +
          `The slope is a least-squares fit over the second half (the first half includes warm-up); “flat” means it grows less than ${FLAT_GROWTH * 100}% over the second half.`,
        '',
        markdown(soakTable(soak)),
        '',
        soakSummary(soak),
        '',
      );
    }
  }
  const ranSection =
    report.small !== undefined ||
    (reads?.day ?? []).length > 0 ||
    (reads?.engines ?? []).some((e) => e.results.some((r) => r.same !== undefined));
  const section = ranSection ? renderSection(report) : section25;
  if (section !== '') out.push(section, '');
  out.push('## Against the goals', '', ...verdicts(report).map((v) => `- ${v}`), '');
  if (report.params.wrk === undefined)
    out.push(`- wrk: ${report.params.wrkMissing}; the load figures are autocannon’s only.`, '');
  if (report.skipped.length > 0) out.push(...report.skipped.map((s) => `- Skipped: ${s}`), '');
  out.push(REPRODUCE, '');
  out.push('## Reading', '', NOTES_START, notes === '' ? '(no notes yet)' : notes, NOTES_END, '');
  return out.join('\n');
}

export function writeMarkdown(report: RunReport, file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const notes = keptNotes(file) || keptNotes(path.join(ROOT, 'docs', 'benchmarks.md'));
  fs.writeFileSync(file, renderMarkdown(report, notes, keptSection(file)));
}
