// Generates a realistic large JUnit XML report: suites of a monorepo, ~5% failures with stack
// traces, some skipped, some Surefire flakyFailure retries, captured output, escaped characters.

import { once } from 'node:events';
import fs from 'node:fs';
import { prng } from './common.ts';

export interface GeneratedReport {
  readonly path: string;
  readonly bytes: number;
  readonly testcases: number;
  readonly failures: number;
  readonly skipped: number;
  readonly flakyRetries: number;
}

const VERBS = ['renders', 'handles', 'rejects', 'parses', 'retries', 'caches', 'serializes', 'validates'];
const OBJECTS = [
  'an empty <input/>',
  'the "quoted" header',
  'a payload with & ampersands',
  'unicode names like café ☕',
  "the user's session",
  'a 10 MB body',
  'nested <Foo>bar</Foo> tags',
  'tabs\tand spaces',
];

export function escapeXml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll('\t', '&#9;');
}

function stackTrace(rand: () => number, module: number, frames: number): string {
  const lines = [
    `AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n+ actual - expected\n\n+ 'status <500>'\n- 'status <200>'`,
  ];
  for (let f = 0; f < frames; f++) {
    const file = `/home/runner/work/web/web/packages/module-${module}/src/lib/component_${Math.floor(rand() * 40)}.ts`;
    lines.push(
      `    at Object.<anonymous> (${file}:${1 + Math.floor(rand() * 900)}:${1 + Math.floor(rand() * 80)}) & more`,
    );
  }
  return lines.join('\n');
}

function output(rand: () => number, lines: number): string {
  const out: string[] = [];
  for (let l = 0; l < lines; l++) {
    out.push(
      `[${new Date(1_700_000_000_000 + Math.floor(rand() * 1e9)).toISOString()}] INFO request id=${Math.floor(rand() * 1e9)} path=/api/v1/items?limit=50&offset=${l} status=200 <ok>`,
    );
  }
  return out.join('\n');
}

/**
 * Writes the report to `file` and returns what it holds. Deterministic for a given `testcases`.
 * `small`: test cases of about 200 bytes (1.5% failing with a short trace, nothing captured), as
 * the 5,000-case reports of a busy repository are.
 */
export async function generateJunit(
  file: string,
  testcases: number,
  options: { small?: boolean } = {},
): Promise<GeneratedReport> {
  const rand = prng(42);
  const stream = fs.createWriteStream(file);
  let buffer = '';
  let bytes = 0;
  const flush = async (force: boolean) => {
    if (buffer.length < 1 << 20 && !force) return;
    bytes += Buffer.byteLength(buffer);
    if (!stream.write(buffer)) await once(stream, 'drain');
    buffer = '';
  };
  const perSuite = 200;
  const suites = Math.ceil(testcases / perSuite);
  const stamp = new Date(Date.now() - 3_600_000).toISOString().slice(0, 19);
  let failures = 0;
  let skipped = 0;
  let flakyRetries = 0;
  buffer += `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="acme web ci" tests="${testcases}">\n`;
  let index = 0;
  for (let s = 0; s < suites; s++) {
    const module = s % 97;
    const suiteName = `@acme/module-${module} › suite ${s}`;
    const count = Math.min(perSuite, testcases - index);
    const cases: string[] = [];
    let suiteFailures = 0;
    let suiteSkipped = 0;
    let suiteTime = 0;
    for (let c = 0; c < count; c++, index++) {
      const feature = Math.floor(c / 20);
      const file = `packages/module-${module}/src/feature_${s}_${feature}.test.ts`;
      const classname = `Module${module}.Feature${s}_${feature}`;
      const name = `${VERBS[index % VERBS.length]} ${OBJECTS[(index >> 3) % OBJECTS.length]} (case ${index})`;
      const time = rand() * 2;
      suiteTime += time;
      const head = `    <testcase name="${escapeXml(name)}" classname="${escapeXml(classname)}" file="${file}" time="${time.toFixed(3)}"`;
      const roll = rand();
      if (options.small === true) {
        if (roll < 0.015) {
          failures++;
          suiteFailures++;
          cases.push(
            `${head}>\n      <failure message="expected 200" type="AssertionError">${escapeXml(stackTrace(rand, module, 3))}</failure>\n    </testcase>`,
          );
        } else cases.push(`${head}/>`);
      } else if (roll < 0.05) {
        failures++;
        suiteFailures++;
        const frames = 25 + Math.floor(rand() * 20);
        cases.push(
          `${head}>\n      <failure message="${escapeXml(`expected status <200> but got <500> for "${name}"`)}" type="AssertionError">${escapeXml(stackTrace(rand, module, frames))}</failure>\n      <system-out>${escapeXml(output(rand, 6))}</system-out>\n    </testcase>`,
        );
      } else if (roll < 0.07) {
        skipped++;
        suiteSkipped++;
        cases.push(
          `${head}>\n      <skipped message="disabled on CI: see #${index % 1000} &amp; friends"/>\n    </testcase>`,
        );
      } else if (roll < 0.075) {
        flakyRetries++;
        cases.push(
          `${head}>\n      <flakyFailure message="timeout after 5000 ms" type="TimeoutError">${escapeXml(stackTrace(rand, module, 8))}</flakyFailure>\n    </testcase>`,
        );
      } else if (roll < 0.3) {
        cases.push(`${head}>\n      <system-out>${escapeXml(output(rand, 3))}</system-out>\n    </testcase>`);
      } else {
        cases.push(`${head}/>`);
      }
    }
    buffer += `  <testsuite name="${escapeXml(suiteName)}" tests="${count}" failures="${suiteFailures}" errors="0" skipped="${suiteSkipped}" time="${suiteTime.toFixed(3)}" timestamp="${stamp}" hostname="runner-${s % 8}">\n`;
    if (s === 0) buffer += '    <properties><property name="ci" value="github-actions"/></properties>\n';
    buffer += cases.join('\n');
    buffer += '\n  </testsuite>\n';
    await flush(false);
  }
  buffer += '</testsuites>\n';
  await flush(true);
  stream.end();
  await once(stream, 'finish');
  return { path: file, bytes, testcases, failures, skipped, flakyRetries };
}
