// Renders the figures: aligned text tables on stdout and the same as markdown in docs/benchmarks.md.
// Text between the notes markers of an existing file is kept, so a hand-written reading survives
// a new run.
import fs from 'node:fs';
import path from 'node:path';
import { fmt, type Params, ROOT } from './common.ts';
import type { IngestReport } from './ingest.ts';
import type { LoadResult } from './load.ts';
import type { ReadsReport } from './reads.ts';

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

function ingestTable(ingest: IngestReport): Table {
  return {
    head: ['step', 'engine', 'seconds', 'test cases/s', 'ratio to bare saxes', 'server peak RSS'],
    rows: ingest.rows.map((r) => [
      r.label,
      r.engine,
      fmt.s(r.seconds),
      fmt.int(r.casesPerSecond),
      fmt.ratio(r.ratio),
      r.peakRss === undefined ? '' : fmt.mb(r.peakRss),
    ]),
  };
}

function readRow(r: LoadResult, base: LoadResult): string[] {
  return [
    r.name,
    fmt.int(r.rps),
    fmt.ratio(r.rps / base.rps),
    fmt.int(r.p50),
    fmt.int(r.p99),
    fmt.ms(r.seq.p50),
    fmt.ms(r.seq.p99),
    fmt.ratio(r.seq.p99 / base.seq.p99),
    fmt.ms(r.seq.max),
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
  'p99 ms (seq)',
  'p99 (seq) ÷ baseline',
  'max ms (seq)',
  'non-2xx',
];

function readTables(reads: ReadsReport): { title: string; table: Table }[] {
  const base = reads.baseline;
  const out = [{ title: 'Baseline', table: { head: READ_HEAD, rows: [readRow(base, base)] } }];
  for (const e of reads.engines) {
    out.push({
      title: e.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL',
      table: { head: READ_HEAD, rows: e.results.map((r) => readRow(r, base)) },
    });
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
  if (report.reads !== undefined) {
    for (const t of readTables(report.reads)) parts.push(`Reads: ${t.title}`, text(t.table));
  }
  parts.push(
    verdicts(report)
      .map((v) => `- ${v}`)
      .join('\n'),
  );
  if (report.skipped.length > 0) parts.push(report.skipped.map((s) => `skipped: ${s}`).join('\n'));
  return `\n${parts.join('\n\n')}\n`;
}

function verdicts(report: RunReport): string[] {
  const out: string[] = [];
  const ingest = report.ingest;
  if (ingest !== undefined) {
    const parse = ingest.rows.find((r) => r.label === 'parseJunitFile');
    const uploads = ingest.rows.filter((r) => r.label.startsWith('upload'));
    if (parse !== undefined) {
      out.push(
        `Ingest goal (≥ 0.5 of a bare saxes parse): parseJunitFile alone reaches ${fmt.ratio(parse.ratio)} — ${parse.ratio >= 0.5 ? 'met' : 'missed'}.`,
      );
    }
    if (uploads.length > 0) {
      const worst = Math.min(...uploads.map((u) => u.ratio));
      const best = Math.max(...uploads.map((u) => u.ratio));
      out.push(
        `A full upload through HTTP into the database reaches ${fmt.ratio(worst)}–${fmt.ratio(best)} of the bare parse — ${best >= 0.5 ? 'met' : 'missed'} if the goal is read as end-to-end ingestion.`,
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
    for (const p of sqlite.results.filter((r) => /^dashboard: (test page|unhealthy)/.test(r.name))) {
      out.push(
        `SQLite dashboard goal (p99 ≤ 50 ms): ${p.name}: p99 ${fmt.ms(p.seq.p99)} ms — ${p.seq.p99 <= 50 ? 'met' : 'missed'}.`,
      );
    }
  }
  return out;
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

export function renderMarkdown(report: RunReport, notes: string): string {
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
    `- Parameters: BENCH_SCALE=${p.scale}; ingest file ${fmt.int(p.ingestCases)} test cases; read data ${fmt.int(p.readCases)} test cases / ${fmt.int(p.readResults)} results (+ ${fmt.int(p.otherCases)} / ${fmt.int(p.otherResults)} in a second organization); autocannon ${p.duration} s × ${p.connections} connections per request; ${p.sequential} sequential requests per request for the fine percentiles.`,
    '- Server: `bin/mainline.mjs serve` as a child process, LOG_LEVEL=warn, MAINLINE_RATE_LIMIT=0, MAINLINE_HEALTH_SWEEP_SECONDS=0; load generator in the bench process on the same 2 cores; loopback only.',
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
        'Uploads are multipart POSTs to a fresh database (the second upload sends the same file for another commit, so every test exists); ' +
        'the time is from sending the request to the complete answer. Peak RSS is the server process’s VmHWM after the upload.',
      '',
      markdown(ingestTable(report.ingest)),
      '',
    );
  }
  if (report.reads !== undefined) {
    out.push('## Reads at scale', '');
    for (const e of report.reads.engines) {
      const s = e.seeded.meta;
      out.push(
        `- ${e.engine}: ${fmt.int(s.main.cases)} test cases (${fmt.int(s.main.flaky)} FLAKY, ${fmt.int(s.main.broken)} BROKEN), ` +
          `${fmt.int(s.main.results)} results (${((100 * s.main.failed) / s.main.results).toFixed(1)}% failed) over 30 days; ` +
          `second organization ${fmt.int(s.other.cases)} / ${fmt.int(s.other.results)}. ` +
          `${e.seeded.cached ? 'Reused' : 'Seeded'} (seeding took ${Math.round(s.seedSeconds)} s). ` +
          `The list walk reached page ${e.laterPage + 1} of ${fmt.int(e.totalUnhealthy)} rows; the run wrote ${fmt.int(e.snapshotRows)} snapshot rows.`,
      );
    }
    out.push(
      '',
      '“load” columns: autocannon (whole milliseconds, latency includes queueing behind the other connections). ' +
        '“seq” columns: one request at a time with `performance.now()` around each (client overhead included, as in the baseline).',
      '',
    );
    for (const t of readTables(report.reads)) out.push(`### ${t.title}`, '', markdown(t.table), '');
  }
  out.push('## Against the goals', '', ...verdicts(report).map((v) => `- ${v}`), '');
  if (report.skipped.length > 0) out.push(...report.skipped.map((s) => `- Skipped: ${s}`), '');
  out.push('## Reading', '', NOTES_START, notes === '' ? '(no notes yet)' : notes, NOTES_END, '');
  return out.join('\n');
}

export function writeMarkdown(report: RunReport, file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const notes = keptNotes(file) || keptNotes(path.join(ROOT, 'docs', 'benchmarks.md'));
  fs.writeFileSync(file, renderMarkdown(report, notes));
}
