// The internal.bin decoder (src/domain/internal-bin) on its own: whatever the chunking, the same
// attempts; both layouts the CLI's reader accepts (trunk-io/analytics-cli fcbc1bd2a5f8d730f453f60e4b0b117fd12f93f8,
// context/src/junit/parser.rs bin_parse: a TestReport, else a bare TestResult); the JUnit limits on strings.
import { describe, expect, it } from 'vitest';
import {
  createInternalBinDecoder,
  encodeReport,
  encodeResult,
  type RunInput,
} from '../../src/domain/internal-bin/index.ts';
import type { JunitAttempt } from '../../src/domain/junit/index.ts';

function decode(bytes: Uint8Array, chunk: number) {
  const attempts: JunitAttempt[] = [];
  const decoder = createInternalBinDecoder({ onAttempts: (batch) => attempts.push(...batch), batchSize: 2 });
  for (let at = 0; at < bytes.length; at += chunk) decoder.write(bytes.subarray(at, at + chunk));
  return { summary: decoder.close(), attempts };
}

const RUNS: RunInput[] = [
  {
    id: 'trunk:./spec/a_spec.rb[1:1]',
    name: 'A works',
    classname: 'spec.a_spec',
    file: './spec/a_spec.rb',
    parentName: 'A',
    status: 2,
    lineNumber: { number: 3 },
    startedAt: { seconds: 1_782_900_000, nanos: 250_000_000 },
    finishedAt: { seconds: 1_782_900_001, nanos: 0 },
    output: { text: 'expected true\n# ./spec/a_spec.rb:3   ', message: 'expected true' },
  },
  {
    id: 'trunk:./spec/a_spec.rb[1:1]',
    name: 'A works',
    classname: 'spec.a_spec',
    file: './spec/a_spec.rb',
    parentName: 'A',
    status: 1,
  },
  { name: 'B is pending', parentName: 'B', status: 3, line: 7 },
  { name: 'C has no status', parentName: 'C' },
  { parentName: 'D' },
];

describe('internal.bin decoding', () => {
  it('gives the same attempts fed whole or a byte at a time, in either layout', () => {
    const whole = decode(encodeReport([RUNS.slice(0, 2), RUNS.slice(2)]), 1 << 20);
    expect(whole.summary).toEqual({
      ok: true,
      counts: { testcases: 4, attempts: 4, failures: 1, skipped: 2, retries: 1 },
      problems: [
        {
          severity: 'warning',
          message: '1 test case run(s) have no status (TEST_CASE_RUN_STATUS_UNSPECIFIED): counted as skipped',
        },
        { severity: 'warning', message: '1 test case run(s) without a name ignored' },
      ],
    });
    expect(whole.attempts[0]).toEqual({
      name: 'A works',
      classname: 'spec.a_spec',
      file: './spec/a_spec.rb',
      parent: 'A',
      suite: 'A',
      customId: 'trunk:./spec/a_spec.rb[1:1]',
      line: 3,
      outcome: 'failed',
      failureKind: 'failure',
      failureMessage: 'expected true',
      failureType: null,
      failureText: 'expected true\n# ./spec/a_spec.rb:3',
      durationMs: 750,
      timestamp: 1_782_900_000_250,
      retryIndex: 0,
      source: 'testcase',
      caseIndex: 0,
    });
    expect(whole.attempts.map((a) => [a.name, a.outcome, a.retryIndex, a.line])).toEqual([
      ['A works', 'failed', 0, 3],
      ['A works', 'passed', 1, null],
      ['B is pending', 'skipped', 0, 7],
      ['C has no status', 'skipped', 0, null],
    ]);
    for (const bytes of [encodeReport([RUNS.slice(0, 2), RUNS.slice(2)]), encodeResult(RUNS)]) {
      for (const chunk of [1, 3, 7]) expect(decode(bytes, chunk)).toEqual(whole);
    }
  });

  it('cuts identity strings and failure texts as the JUnit parser does', () => {
    const long = 'x'.repeat(5000);
    const { attempts } = decode(
      encodeReport([
        [{ name: long, classname: long, status: 2, output: { text: 'y'.repeat(20_000), message: long } }],
      ]),
      4096,
    );
    expect(attempts[0]?.name.length).toBe(1000);
    expect(attempts[0]?.classname?.length).toBe(1000);
    expect(attempts[0]?.failureText?.length).toBe(8000);
    expect(attempts[0]?.failureMessage?.length).toBe(5000);
  });

  it('reads an empty file as a report without runs', () => {
    expect(decode(new Uint8Array(0), 1).summary).toEqual({
      ok: true,
      counts: { testcases: 0, attempts: 0, failures: 0, skipped: 0, retries: 0 },
      problems: [{ severity: 'warning', message: 'internal.bin holds no test case runs' }],
    });
  });
});
