import type { Attempt, SuiteRun } from './test-suite.ts';

/** Escapes text for an XML attribute value or element content. */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** `name="value" …`, escaped. */
function attributes(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([name, value]) => `${name}="${escapeXml(String(value))}"`)
    .join(' ');
}

function testcase(a: Attempt): string {
  const t = a.test;
  const attrs = attributes({
    classname: t.classname,
    name: t.name,
    file: t.file,
    time: seconds(a.durationMs),
  });
  if (a.outcome === 'passed' || a.failure === undefined) return `    <testcase ${attrs}/>`;
  const f = a.failure;
  return [
    `    <testcase ${attrs}>`,
    `      <failure type="${escapeXml(f.type)}" message="${escapeXml(f.message)}">${escapeXml(f.text)}</failure>`,
    '    </testcase>',
  ].join('\n');
}

/**
 * A JUnit XML report of a run, one <testsuite> per test file. A retried test appears once per attempt,
 * consecutively, with the same identity (as gotestsum or jest's retries write it), so every attempt
 * counts. `timestamp` dates the suites (the server uses it as the time of the attempts).
 */
export function junitXml(run: SuiteRun, options: { name: string; timestamp?: Date }): string {
  const stamp: Record<string, string> =
    options.timestamp === undefined ? {} : { timestamp: options.timestamp.toISOString() };
  const byFile = new Map<string, Attempt[]>();
  for (const a of run.attempts) {
    const list = byFile.get(a.test.file) ?? [];
    list.push(a);
    byFile.set(a.test.file, list);
  }
  const total = (list: readonly Attempt[]) => list.reduce((sum, a) => sum + a.durationMs, 0);
  const failures = (list: readonly Attempt[]) => list.filter((a) => a.outcome === 'failed').length;
  const suites = [...byFile.values()].map((list) => {
    const first = list[0] as Attempt;
    return [
      `  <testsuite ${attributes({
        name: first.test.suite,
        file: first.test.file,
        tests: list.length,
        failures: failures(list),
        errors: 0,
        skipped: 0,
        time: seconds(total(list)),
        ...stamp,
      })}>`,
      ...list.map(testcase),
      '  </testsuite>',
    ].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites ${attributes({
      name: options.name,
      tests: run.attempts.length,
      failures: failures(run.attempts),
      errors: 0,
      time: seconds(total(run.attempts)),
      ...stamp,
    })}>`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
