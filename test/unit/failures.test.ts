import { describe, expect, it } from 'vitest';
import type { FailureOccurrence } from '../../src/domain/failures/index.ts';
import {
  failureFingerprint,
  groupFailures,
  normaliseFailure,
  summariseFailure,
} from '../../src/domain/failures/index.ts';

const T0 = Date.UTC(2026, 0, 5, 12);
const MINUTE = 60_000;

function occurrence(overrides: Partial<FailureOccurrence> = {}): FailureOccurrence {
  return { text: 'AssertionError: expected true to be false', at: T0, ...overrides };
}

const java = (hash: string, millis: number) =>
  [
    `org.opentest4j.AssertionFailedError: expected: <Order@${hash}> but was: <null> (took ${millis} ms)`,
    '\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)',
    '\tat org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)',
    '\tat com.acme.orders.OrderApiTest.createsOrder(OrderApiTest.java:48)',
    '\tat java.base/java.lang.reflect.Method.invoke(Method.java:580)',
  ].join('\n');

const javaNpe = [
  'java.lang.NullPointerException: Cannot invoke "Order.id()" because "order" is null',
  '\tat com.acme.orders.OrderService.place(OrderService.java:77)',
  '\tat com.acme.orders.OrderApiTest.createsOrder(OrderApiTest.java:45)',
].join('\n');

const python = (port: number, requestId: string, tmp: string) =>
  [
    'Traceback (most recent call last):',
    `  File "${tmp}/app/tests/test_upload.py", line 31, in test_upload`,
    '    client.upload(path)',
    `  File "${tmp}/app/app/client.py", line 88, in upload`,
    '    raise ConnectionError(f"connect to 127.0.0.1:{port} failed")',
    `ConnectionError: connect to 127.0.0.1:${port} failed (request ${requestId})`,
  ].join('\n');

const pytest = (got: number) =>
  [
    '    def test_total():',
    `>       assert cart.total() == 40`,
    `E       assert ${got} == 40`,
    `E        +  where ${got} = <bound method Cart.total of <shop.Cart object at 0x7f3a2c1d9e80>>()`,
    '',
    'tests/test_cart.py:12: AssertionError',
  ].join('\n');

const jest = (root: string) =>
  [
    'Error: expect(received).toBe(expected) // Object.is equality',
    '',
    'Expected: 4',
    'Received: 3',
    `    at Object.<anonymous> (${root}/src/sum.test.ts:5:17)`,
    `    at Promise.then.completed (${root}/node_modules/jest-circus/build/utils.js:298:28)`,
  ].join('\n');

const goPanic = (goroutine: number, address: string) =>
  [
    'panic: runtime error: index out of range [5] with length 3 [recovered]',
    '',
    `goroutine ${goroutine} [running]:`,
    `testing.tRunner.func1.2({0x5f4a60, ${address}})`,
    '\t/usr/local/go/src/testing/testing.go:1526 +0x24e',
    `github.com/acme/store.(*Store).Get(${address}, {0x0, 0x0})`,
    '\t/home/runner/work/store/store/store.go:88 +0x1d',
  ].join('\n');

describe('normaliseFailure', () => {
  it.each([
    ['numbers', 'expected 3 items, got 12', 'expected <n> items, got <n>'],
    ['UUIDs', 'run 7f3c2a9e-1b2d-4c5e-9f00-123456789abc failed', 'run <uuid> failed'],
    ['ISO timestamps', 'deadline 2026-01-05T12:00:01.123Z passed', 'deadline <time> passed'],
    ['times of day', '12:34:56.789 connection reset', '<time> connection reset'],
    ['commit shas and other hex ids', 'container 3f9a1c2b7e80 exited', 'container <hex> exited'],
    ['memory addresses', 'segfault at 0x7ffd5c1e', 'segfault at <addr>'],
    ['Java identity hashes', 'got com.acme.Order@1b6d3586', 'got com.acme.Order@<addr>'],
    ['double-quoted values', 'Expected "alice" but got "bob"', 'Expected <str> but got <str>'],
    ['single-quoted values', "KeyError: 'user_42'", 'KeyError: <str>'],
    ['temporary directories', 'cannot open /tmp/pytest-of-runner/pytest-17/tmpk3j2x9q', 'cannot open <path>'],
    ['directories before a file name', 'at /home/runner/work/app/src/a.ts:12:5', 'at <path>/a.ts:<n>:<n>'],
    [
      'Windows paths',
      'missing C:\\Users\\runner\\AppData\\Local\\Temp\\x1\\out.log',
      'missing <path>/out.log',
    ],
    ['URLs with ports', 'GET http://127.0.0.1:54321/api/v1/items failed', 'GET <url> failed'],
    ['colour codes', '\u001b[31mFAIL\u001b[39m sum', 'FAIL sum'],
  ])('masks %s', (_kind, input, expected) => {
    expect(normaliseFailure(input)).toBe(expected);
  });

  it('keeps apostrophes inside words', () => {
    expect(normaliseFailure("element isn't visible")).toBe("element isn't visible");
  });

  it('keeps one trimmed line per non-blank line', () => {
    expect(normaliseFailure('  Error: boom  \n\n    at   run (x.js:1:2)\r\n')).toBe(
      'Error: boom\nat run (x.js:<n>:<n>)',
    );
  });
});

describe('failureFingerprint', () => {
  it('is the same for Java failures that differ only in object hashes and timings', () => {
    expect(failureFingerprint(java('1b6d3586', 312))).toBe(failureFingerprint(java('7a81197d', 4051)));
  });

  it('differs for a different Java exception in the same test', () => {
    expect(failureFingerprint(javaNpe)).not.toBe(failureFingerprint(java('1b6d3586', 312)));
  });

  it('is the same for Python tracebacks that differ in port, request id and temp checkout', () => {
    const first = python(54321, '7f3c2a9e-1b2d-4c5e-9f00-123456789abc', '/tmp/build-a81f');
    const second = python(40112, '0b1e2d3c-4a5b-4c6d-8e7f-000000000001', '/tmp/build-93c2');
    expect(failureFingerprint(first)).toBe(failureFingerprint(second));
  });

  it('differs for a Python traceback ending in another exception', () => {
    const other = python(54321, 'x', '/tmp/a').replace(
      /^ConnectionError: .*$/m,
      'TimeoutError: read timed out',
    );
    expect(failureFingerprint(other)).not.toBe(failureFingerprint(python(54321, 'x', '/tmp/a')));
  });

  it('is the same for pytest assertions that differ only in values and addresses', () => {
    expect(failureFingerprint(pytest(38))).toBe(failureFingerprint(pytest(41)));
  });

  it('is the same for Jest failures from different checkout directories', () => {
    expect(failureFingerprint(jest('/home/runner/work/web/web'))).toBe(
      failureFingerprint(jest('/builds/acme/web')),
    );
  });

  it('differs for the same Jest message raised from another test file', () => {
    const elsewhere = jest('/builds/acme/web').replace('sum.test.ts', 'cart.test.ts');
    expect(failureFingerprint(elsewhere)).not.toBe(failureFingerprint(jest('/builds/acme/web')));
  });

  it('is the same for Go panics with other goroutine numbers and addresses', () => {
    expect(failureFingerprint(goPanic(7, '0xc0000b4018'))).toBe(
      failureFingerprint(goPanic(31, '0xc00012a000')),
    );
  });

  it('is the same for Go test errors that differ only in their temp directory', () => {
    const goError = (dir: string) =>
      `=== RUN   TestStore\n    store_test.go:42: open ${dir}/001/db.sqlite: too many open files\n--- FAIL: TestStore (0.01s)`;
    expect(failureFingerprint(goError('/tmp/TestStore1234567'))).toBe(
      failureFingerprint(goError('/tmp/TestStore98')),
    );
    expect(failureFingerprint(goError('/tmp/x'))).not.toBe(
      failureFingerprint(goError('/tmp/x').replace('too many open files', 'permission denied')),
    );
  });
});

describe('summariseFailure', () => {
  it('uses the exception line of a Java trace', () => {
    expect(summariseFailure(java('1b6d3586', 312))).toBe(
      'org.opentest4j.AssertionFailedError: expected: <Order@1b6d3586> but was: <null> (took 312 ms)',
    );
  });

  it('uses the last line of a Python traceback', () => {
    expect(summariseFailure(python(54321, 'r-1', '/tmp/a'))).toBe(
      'ConnectionError: connect to 127.0.0.1:54321 failed (request r-1)',
    );
  });

  it('puts the exception type in front of a pytest assertion', () => {
    expect(summariseFailure(pytest(38))).toBe('AssertionError: assert 38 == 40');
  });

  it('uses the panic line of a Go trace and the message of a Go test error', () => {
    expect(summariseFailure(goPanic(7, '0x1'))).toBe(
      'panic: runtime error: index out of range [5] with length 3 [recovered]',
    );
    expect(summariseFailure('=== RUN   TestX\n    x_test.go:9: got 3, want 4\n--- FAIL: TestX (0.00s)')).toBe(
      'x_test.go:9: got 3, want 4',
    );
  });

  it('shortens long messages to 200 characters and strips colour codes', () => {
    const summary = summariseFailure(`\u001b[31mError: ${'x'.repeat(500)}\u001b[39m`);
    expect(summary).toHaveLength(200);
    expect(summary.startsWith('Error: xxx')).toBe(true);
    expect(summary.endsWith('…')).toBe(true);
  });

  it('says so when there is no message at all', () => {
    expect(summariseFailure('  \n ')).toBe('(no failure message)');
  });
});

describe('groupFailures', () => {
  it('counts occurrences per group with the latest occurrence and the most common summary', () => {
    const groups = groupFailures(
      [
        occurrence({ text: pytest(38), at: T0 }),
        occurrence({ text: pytest(38), at: T0 + MINUTE }),
        occurrence({ text: pytest(41), at: T0 + 5 * MINUTE }),
      ],
      10,
    );
    expect(groups).toEqual([
      {
        summary: 'AssertionError: assert 38 == 40',
        occurrenceCount: 3,
        lastOccurrence: T0 + 5 * MINUTE,
        fingerprint: failureFingerprint(pytest(38)),
      },
    ]);
  });

  it('sorts by count, then by latest occurrence, and keeps genuinely different failures apart', () => {
    const groups = groupFailures(
      [
        occurrence({ text: javaNpe, at: T0 }),
        occurrence({ text: java('1b6d3586', 1), at: T0 + MINUTE }),
        occurrence({ text: java('7a81197d', 2), at: T0 + 2 * MINUTE }),
        occurrence({ text: goPanic(7, '0x1'), at: T0 + 3 * MINUTE }),
      ],
      10,
    );
    expect(groups.map((group) => [group.occurrenceCount, group.lastOccurrence])).toEqual([
      [2, T0 + 2 * MINUTE],
      [1, T0 + 3 * MINUTE],
      [1, T0],
    ]);
    expect(groups[2]?.summary).toBe(summariseFailure(javaNpe));
  });

  it('returns at most `limit` groups', () => {
    const items = [javaNpe, pytest(1), goPanic(1, '0x1')].map((text) => occurrence({ text }));
    expect(groupFailures(items, 2)).toHaveLength(2);
    expect(groupFailures(items, 0)).toEqual([]);
  });

  it('gives the same groups whatever the input order', () => {
    const items = [
      occurrence({ text: javaNpe, at: T0 }),
      occurrence({ text: pytest(1), at: T0 }),
      occurrence({ text: pytest(2), at: T0 }),
      occurrence({ text: goPanic(1, '0x1'), at: T0 }),
      occurrence({ text: '', at: T0 }),
    ];
    expect(groupFailures([...items].reverse(), 10)).toEqual(groupFailures(items, 10));
  });

  it('groups failures without any text under one summary', () => {
    const groups = groupFailures([occurrence({ text: '' }), occurrence({ text: '\n' })], 10);
    expect(groups).toMatchObject([{ summary: '(no failure message)', occurrenceCount: 2 }]);
  });
});
