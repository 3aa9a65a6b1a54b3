// Decoding analytics-cli's internal.bin vs parsing the same report as JUnit XML, in process, on one
// thread: the median of BENCH_INGEST_REPEAT (default 5) runs of each, for BENCH_CASES (default
// 100,000) test cases (~5% failing with a stack trace, ~2% skipped), both fed in 128 KiB chunks as
// a bundle's decoding thread feeds them. Not part of `npm run bench`:
//   node --import tsx bench/internal-bin.ts
import { performance } from 'node:perf_hooks';
import { createInternalBinDecoder, encodeReport, type RunInput } from '../src/domain/internal-bin/index.ts';
import { createJunitParser } from '../src/domain/junit/index.ts';

const CASES = Number(process.env.BENCH_CASES ?? 100_000);
const REPEAT = Number(process.env.BENCH_INGEST_REPEAT ?? 5);
const CHUNK = 128 * 1024;
const START = Date.parse('2026-07-01T10:00:00Z') / 1000;

function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('"', '&quot;');
}

function report(): { xml: Uint8Array; bin: Uint8Array } {
  const suites: string[] = [];
  const runs: RunInput[] = [];
  const perSuite = 50;
  for (let s = 0; s * perSuite < CASES; s++) {
    const suite = `pkg${s % 40}.module${s}`;
    const file = `src/pkg${s % 40}/module${s}.test.ts`;
    const cases: string[] = [];
    for (let c = 0; c < perSuite && s * perSuite + c < CASES; c++) {
      const i = s * perSuite + c;
      const name = `handles case ${i} of the "${suite}" module`;
      const classname = `${suite}.Spec${c % 5}`;
      const failed = i % 20 === 7;
      const skipped = i % 50 === 3;
      const message = `expected ${i} to equal ${i + 1}`;
      const trace = `${message}\n    at Object.<anonymous> (${file}:${c + 10}:5)\n    at run (node_modules/runner/index.js:120:9)`;
      const inner = failed
        ? `<failure message="${escapeXml(message)}" type="AssertionError">${escapeXml(trace)}</failure>`
        : skipped
          ? '<skipped/>'
          : '';
      cases.push(
        `<testcase name="${escapeXml(name)}" classname="${classname}" file="${file}" time="0.012">${inner}</testcase>`,
      );
      runs.push({
        name,
        classname,
        file,
        parentName: suite,
        status: failed ? 2 : skipped ? 3 : 1,
        startedAt: { seconds: START, nanos: 0 },
        finishedAt: { seconds: START, nanos: 12_000_000 },
        ...(failed ? { statusOutputMessage: trace, output: { text: trace, message } } : {}),
      });
    }
    suites.push(`<testsuite name="${suite}" timestamp="2026-07-01T10:00:00Z">${cases.join('')}</testsuite>`);
  }
  const xml = `<?xml version="1.0"?><testsuites>${suites.join('')}</testsuites>`;
  return { xml: new TextEncoder().encode(xml), bin: encodeReport([runs]) };
}

function time(run: () => number): { ms: number; attempts: number } {
  const samples: number[] = [];
  let attempts = 0;
  for (let k = 0; k < REPEAT; k++) {
    const started = performance.now();
    attempts = run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { ms: samples[Math.floor(samples.length / 2)] as number, attempts };
}

function chunked(bytes: Uint8Array, write: (chunk: Uint8Array) => void): void {
  for (let at = 0; at < bytes.length; at += CHUNK) write(bytes.subarray(at, at + CHUNK));
}

const { xml, bin } = report();
const junit = time(() => {
  let n = 0;
  const parser = createJunitParser({ onAttempts: (batch) => (n += batch.length), batchSize: 8192 });
  chunked(xml, (c) => parser.write(c));
  if (!parser.close().ok) throw new Error('the JUnit report was refused');
  return n;
});
const internal = time(() => {
  let n = 0;
  const decoder = createInternalBinDecoder({ onAttempts: (batch) => (n += batch.length), batchSize: 8192 });
  chunked(bin, (c) => decoder.write(c));
  if (!decoder.close().ok) throw new Error('internal.bin was refused');
  return n;
});
const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
console.log(`${CASES} test cases, median of ${REPEAT}`);
console.log(
  `JUnit XML    ${mib(xml.length).padStart(6)} MiB  ${junit.ms.toFixed(0).padStart(6)} ms  ${junit.attempts} attempts`,
);
console.log(
  `internal.bin ${mib(bin.length).padStart(6)} MiB  ${internal.ms.toFixed(0).padStart(6)} ms  ${internal.attempts} attempts`,
);
console.log(`internal.bin / JUnit: ${(internal.ms / junit.ms).toFixed(2)} of the time`);
