// Parsing on parser threads (MAINLINE_PARSE_THREADS, default 2) gives exactly what parsing and
// deriving (test ids, failure facts) on the request thread gives: every fixture, gzip, limits,
// malformed and empty files, several at once.
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeAttempts, encodeAttempts } from '../../src/app/ingest/parsing/codec.ts';
import { ParserPool, parseAndDerive } from '../../src/app/ingest/parsing/pool.ts';
import { Derivation } from '../../src/app/ingest/prepare/derive.ts';
import type { IdentityContext } from '../../src/app/ingest/prepare/types.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { junit, junitXml, multipart, upload } from '../support/upload.ts';

const FIXTURES = new URL('../fixtures/junit/', import.meta.url);
const fixtures = readdirSync(FIXTURES).filter((f) => f.endsWith('.xml'));
const derivation = new Derivation({ testIds: 100_000, failingTests: 1000, failureTexts: 200 });
const poolOf = (threads: number) => new ParserPool({ threads, derivation });
const pool = poolOf(2);
afterAll(() => pool.close());

/** Parses on `on`, with the identity when one is given. */
function parseOn(
  on: ParserPool,
  name: string,
  source: AsyncIterable<Uint8Array>,
  maxBytes: number,
  identity?: IdentityContext,
) {
  return on.parse({ name, source, maxBytes, identity });
}

/** The bytes in pieces of `size`, as a request body arrives. */
async function* pieces(bytes: Uint8Array, size = 1000): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

const MAX = 100 * 1024 * 1024;
const IDENTITY: IdentityContext = { orgSlug: 'acme', repoFullName: 'github.com/acme/web', variant: '' };

/** What the request thread itself would make of the bytes. */
async function direct(
  name: string,
  source: AsyncIterable<Uint8Array>,
  maxBytes = MAX,
  identity: IdentityContext | 'none' = IDENTITY,
) {
  return parseAndDerive(derivation, {
    name,
    source,
    maxBytes,
    identity: identity === 'none' ? undefined : identity,
  });
}

describe('parser threads', () => {
  it.each(fixtures)('%s parses the same on a parser thread', async (name) => {
    const bytes = readFileSync(new URL(name, FIXTURES));
    const expected = await direct(name, pieces(bytes));
    const threaded = await parseOn(pool, name, pieces(bytes), MAX, IDENTITY);
    expect(threaded).toEqual(expected);
    // What crosses the thread: the attempts, as they were.
    expect(decodeAttempts(encodeAttempts(expected.attempts))).toEqual(expected.attempts);
    // Without an identity: failure facts, no ids.
    const anonymous = await parseOn(pool, name, pieces(bytes), MAX);
    expect(anonymous.ids).toBeUndefined();
    expect(anonymous).toEqual(await direct(name, pieces(bytes), MAX, 'none'));
  });

  it('keeps the malformed fixture a per-file error with no attempts', async () => {
    const name = fixtures.find((f) => f.includes('MALFORMED')) as string;
    const parsed = await parseOn(pool, name, pieces(readFileSync(new URL(name, FIXTURES))), MAX);
    expect(parsed.summary.ok).toBe(false);
    expect(parsed.attempts).toEqual([]);
    expect(parsed.summary.problems.at(-1)?.severity).toBe('error');
  });

  it('gunzips, enforces the size limit after decompression, and names empty files', async () => {
    const xml = readFileSync(new URL('11-jest-junit.xml', FIXTURES));
    const gz = gzipSync(xml);
    expect(await parseOn(pool, 'a.xml.gz', pieces(gz, 100), MAX, IDENTITY)).toEqual(
      await direct('a.xml.gz', pieces(xml)),
    );
    const small = await parseOn(pool, 'big.xml', pieces(gz, 100), 1024);
    expect(small.summary.problems).toEqual([
      { severity: 'error', message: 'the file is larger than 1024 bytes (after decompression)' },
    ]);
    const empty = await parseOn(pool, 'empty.xml', pieces(new Uint8Array(0)), MAX);
    expect(empty.summary.problems[0]?.message).toBe('the file is empty');
  });

  it('parses many files at once on few threads, each answer for its own file', async () => {
    const inputs = [...fixtures, ...fixtures, ...fixtures].map((name, i) => ({
      name: `${i}-${name}`,
      bytes: readFileSync(new URL(name, FIXTURES)),
    }));
    const threaded = await Promise.all(
      inputs.map((f) => parseOn(pool, f.name, pieces(f.bytes, 333), MAX, IDENTITY)),
    );
    // In the same pieces: a malformed file is read up to the piece where the parser rejects it.
    const expected = await Promise.all(inputs.map((f) => direct(f.name, pieces(f.bytes, 333))));
    expect(threaded).toEqual(expected);
  });

  it('passes a large report through the thread unchanged (strings shared, numbers exact)', async () => {
    const cases = Array.from(
      { length: 3000 },
      (_, i) =>
        `<testcase classname="pkg.C${i % 7}" name="t &lt;${i}&gt; café" file="src/f${i % 5}.ts" time="${i / 1000}" line="${i + 1}">${
          i % 10 === 0 ? `<failure message="boom ${i}" type="E">stack ${i}\n  at x</failure>` : ''
        }${i % 13 === 0 ? '<skipped/>' : ''}</testcase>`,
    ).join('');
    const xml = Buffer.from(
      `<?xml version="1.0"?><testsuites><testsuite name="s" timestamp="2026-11-20T10:00:00Z">${cases}</testsuite></testsuites>`,
    );
    const threaded = await parseOn(pool, 'big.xml', pieces(xml, 4096), MAX, IDENTITY);
    expect(threaded).toEqual(await direct('big.xml', pieces(xml)));
    expect(threaded.attempts).toHaveLength(3000);
    expect(new Set(threaded.ids?.testIds).size).toBe(3000);
    expect(threaded.failures?.filter((f) => f !== null)).toHaveLength(300);
  });

  it('parses on threads of its own, started on first use; with 0 threads on the calling thread', async () => {
    const fresh = poolOf(2);
    const inline = poolOf(0);
    try {
      expect(fresh.running).toBe(0);
      const bytes = readFileSync(new URL(fixtures[0] as string, FIXTURES));
      // One file after another: the running thread is idle each time, no second one starts.
      for (const _ of [1, 2, 3]) await parseOn(fresh, 'a.xml', pieces(bytes), MAX, IDENTITY);
      expect(fresh.running).toBe(1);
      // Two at once: the second starts.
      await Promise.all([1, 2].map(() => parseOn(fresh, 'a.xml', pieces(bytes), MAX, IDENTITY)));
      expect(fresh.running).toBe(2);
      expect(await parseOn(inline, 'a.xml', pieces(bytes), MAX, IDENTITY)).toEqual(
        await parseOn(fresh, 'a.xml', pieces(bytes), MAX, IDENTITY),
      );
      expect(inline.running).toBe(0);
    } finally {
      await fresh.close();
    }
    expect(fresh.running).toBe(0);
  });

  it('fails the parse, not the process, when the source breaks mid-file', async () => {
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('<testsuite><testcase name="a"/>');
      throw new Error('client went away');
    }
    await expect(parseOn(pool, 'cut.xml', broken(), MAX)).rejects.toThrow('client went away');
    // The thread still serves the next file.
    const ok = await parseOn(
      pool,
      'ok.xml',
      pieces(Buffer.from('<testsuite><testcase name="a"/></testsuite>')),
      MAX,
    );
    expect(ok.summary.ok).toBe(true);
  });
});

describe('uploads parsed on threads or on the request thread', () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const t of apps) await t.close();
  });
  const fixtureFiles = fixtures.map((name) => ({ name, content: junit(name) }));
  /** The stored view of an upload: its answer without the upload id, and every test's record. */
  async function uploadAndRead(t: TestApp, meta: 'first' | 'last', repoName = 'web') {
    const token = await t.token('acme');
    const metaJson = {
      repo: { host: 'github.com', owner: 'acme', name: repoName },
      org_url_slug: 'acme',
      branch: 'main',
      commit_sha: 'c0ffee',
    };
    const body = multipart(metaJson, fixtureFiles);
    const payload =
      meta === 'first'
        ? body.payload
        : // The same parts with meta moved after the files: ids cannot be derived while parsing.
          moveMetaLast(body.payload, body.contentType);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/test-results/upload',
      headers: { 'x-api-token': token, 'content-type': body.contentType },
      payload,
    });
    expect(res.statusCode).toBe(200);
    const { upload_id: _, ...answer } = res.json();
    return answer;
  }

  it('answers the same with 0, 1 or 2 parser threads, and with meta before or after the files', async () => {
    const answers = [];
    for (const [threads, meta] of [
      ['0', 'first'],
      ['1', 'first'],
      ['2', 'first'],
      ['1', 'last'],
    ] as const) {
      const t = await buildTestApp({ MAINLINE_PARSE_THREADS: threads });
      apps.push(t);
      answers.push(await uploadAndRead(t, meta));
    }
    expect(answers[0].counts.test_cases).toBeGreaterThan(20);
    expect(answers[0].failed_tests.length).toBeGreaterThan(0);
    for (const a of answers.slice(1)) expect(a).toEqual(answers[0]);
  });

  it('gives a repository spelled differently by a later upload the same test ids', async () => {
    const t = await buildTestApp();
    apps.push(t);
    const token = await t.token('acme');
    const xml = junitXml([{ name: 'fails', fail: 'boom' }]);
    const first = await upload(t, token, [{ name: 'a.xml', content: xml }], {
      repo: { host: 'github.com', owner: 'Acme', name: 'Web' },
    });
    const again = await upload(t, token, [{ name: 'a.xml', content: xml }], {
      repo: { host: 'github.com', owner: 'acme', name: 'web' },
    });
    expect(again.json().failed_tests[0].test_case_id).toBe(first.json().failed_tests[0].test_case_id);
  });
});

/** Moves the multipart `meta` part (the first) behind the file parts. */
function moveMetaLast(payload: Buffer, contentType: string): Buffer {
  const boundary = `--${contentType.split('boundary=')[1]}`;
  const text = payload.toString('latin1');
  const parts = text.split(boundary).slice(1, -1);
  const [meta, ...files] = parts;
  return Buffer.from(`${[...files, meta].map((p) => boundary + p).join('')}${boundary}--\r\n`, 'latin1');
}
