// MAINLINE_MAX_UPLOAD_ATTEMPTS: an upload's files together hold at most that many attempts (they are
// kept in memory until the upload is stored). A file that would go past the limit gets a per-file
// error that says what to do; the files before it and the smaller ones after it still ingest. The
// same holds for the multipart endpoint (on a parser thread and on the request thread) and for the
// bundle flow.
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { buildTar, metaJson, zstdStored } from '../support/bundles.ts';
import { storedTestNames } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A file of `n` passing tests named `<prefix>-<i>`. */
function tests(prefix: string, n: number): string {
  return junitXml(Array.from({ length: n }, (_, i) => ({ name: `${prefix}-${i}` })));
}

const FILES = [
  { name: 'a.xml', content: tests('a', 3) },
  { name: 'b.xml', content: tests('b', 3) },
  { name: 'c.xml', content: tests('c', 2) },
];

interface Answer {
  counts: { test_cases: number; attempts: number; files: number };
  files: { name: string; ok: boolean; problems: { severity: string; message: string }[] }[];
}

function expectLimited(answer: Answer): void {
  expect(answer.counts).toMatchObject({ test_cases: 5, attempts: 5, files: 3 });
  expect(answer.files.map((f) => [f.name, f.ok])).toEqual([
    ['a.xml', true],
    ['b.xml', false],
    ['c.xml', true],
  ]);
  expect(answer.files[1]?.problems.at(-1)).toMatchObject({
    severity: 'error',
    message:
      'this file would take the upload past 5 test attempts, the most one upload may hold (MAINLINE_MAX_UPLOAD_ATTEMPTS): send it in an upload of its own',
  });
}

describe('attempts per upload', () => {
  it.each([
    ['on a parser thread', '1'],
    ['on the request thread', '0'],
  ])('refuses the file that would go past the limit, %s, and ingests the others', async (_, threads) => {
    t = await buildTestApp({ MAINLINE_MAX_UPLOAD_ATTEMPTS: '5', MAINLINE_PARSE_THREADS: threads });
    const token = await t.token('acme');
    const res = await upload(t, token, FILES);
    expect(res.statusCode, res.body).toBe(200);
    expectLimited(res.json());
  });

  it('counts the files of a bundle the same way', async () => {
    t = await buildTestApp({ MAINLINE_MAX_UPLOAD_ATTEMPTS: '5' });
    const app = t;
    const token = await app.token('acme');
    const created = await app.post(
      '/v1/metrics/createBundleUpload',
      { repo: REPO, orgUrlSlug: 'acme', clientVersion: '0.7.8', remoteUrls: [] },
      token,
    );
    expect(created.statusCode).toBe(200);
    const url = new URL(created.json().url as string);
    const meta = metaJson({
      variant: '',
      repo: {
        repo: REPO,
        repo_url: 'https://github.com/acme/web.git',
        repo_head_sha: 'feedbeef',
        repo_head_branch: 'refs/heads/main',
      },
      file_sets: [
        {
          file_set_type: 'Junit',
          glob: '**/*.xml',
          files: FILES.map((f, i) => ({ original_path: f.name, path: `junit/${i}`, owners: [] })),
        },
      ],
    });
    const tar = await buildTar([
      { name: 'meta.json', data: meta },
      ...FILES.map((f, i) => ({ name: `junit/${i}`, data: f.content })),
    ]);
    const res = await app.app.inject({
      method: 'PUT',
      url: url.pathname + url.search,
      payload: Buffer.from(zstdStored(tar)),
    });
    expect(res.statusCode, res.body).toBe(200);
    expectLimited(res.json());
  });

  it('stores nothing of the refused file, and the limit holds per upload, not per repository', async () => {
    t = await buildTestApp({ MAINLINE_MAX_UPLOAD_ATTEMPTS: '5' });
    const token = await t.token('acme');
    await upload(t, token, FILES, { sha: 'c1' });
    expect(await storedTestNames(t)).toEqual(['a-0', 'a-1', 'a-2', 'c-0', 'c-1']);
    const second = await upload(t, token, [FILES[1] as (typeof FILES)[number]], { sha: 'c2' });
    expect(second.json().files[0].ok).toBe(true);
    expect(await storedTestNames(t)).toEqual(['a-0', 'a-1', 'a-2', 'b-0', 'b-1', 'b-2', 'c-0', 'c-1']);
  });
});
