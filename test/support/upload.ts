import { readFileSync } from 'node:fs';
import type { TestApp } from './app.ts';

export const JUNIT_DIR = new URL('../fixtures/junit/', import.meta.url);

export function junit(name: string): Buffer {
  return readFileSync(new URL(name, JUNIT_DIR));
}

/** A multipart/form-data body as curl -F would send it: a `meta` field and `junit` file parts. */
export function multipart(meta: unknown, files: readonly { name: string; content: Buffer | string }[]) {
  const boundary = `----mainline${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  const push = (s: string) => parts.push(Buffer.from(s));
  push(
    `--${boundary}\r\nContent-Disposition: form-data; name="meta"\r\n\r\n${typeof meta === 'string' ? meta : JSON.stringify(meta)}\r\n`,
  );
  for (const f of files) {
    push(
      `--${boundary}\r\nContent-Disposition: form-data; name="junit"; filename="${f.name}"\r\nContent-Type: application/xml\r\n\r\n`,
    );
    parts.push(Buffer.isBuffer(f.content) ? f.content : Buffer.from(f.content));
    push('\r\n');
  }
  push(`--${boundary}--\r\n`);
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface UploadOptions {
  repo?: { host: string; owner: string; name: string };
  org?: string;
  branch?: string;
  sha?: string;
  pr?: number;
  variant?: string;
  uploadKey?: string;
  codeowners?: string;
}

/** Uploads JUnit files through POST /v1/test-results/upload. */
export function upload(
  t: TestApp,
  token: string,
  files: readonly { name: string; content: Buffer | string }[],
  o: UploadOptions = {},
) {
  const meta = {
    repo: o.repo ?? { host: 'github.com', owner: 'acme', name: 'web' },
    org_url_slug: o.org ?? 'acme',
    branch: o.branch ?? 'main',
    commit_sha: o.sha ?? 'a1b2c3d4',
    ...(o.pr !== undefined ? { pr_number: o.pr } : {}),
    ...(o.variant !== undefined ? { variant: o.variant } : {}),
    ...(o.uploadKey !== undefined ? { upload_key: o.uploadKey } : {}),
    ...(o.codeowners !== undefined ? { codeowners: o.codeowners } : {}),
  };
  const body = multipart(meta, files);
  return t.app.inject({
    method: 'POST',
    url: '/v1/test-results/upload',
    headers: { 'x-api-token': token, 'content-type': body.contentType },
    payload: body.payload,
  });
}

/** A JUnit file with one test per entry, each passing or failing. */
export function junitXml(
  cases: readonly { name: string; classname?: string; file?: string; fail?: string | false; time?: number }[],
  suite = 'suite',
): string {
  const body = cases
    .map((c) => {
      const attrs = `name="${c.name}" classname="${c.classname ?? 'pkg.Class'}"${c.file ? ` file="${c.file}"` : ''}${c.time !== undefined ? ` time="${c.time}"` : ''}`;
      return c.fail
        ? `<testcase ${attrs}><failure message="boom">${c.fail}</failure></testcase>`
        : `<testcase ${attrs}/>`;
    })
    .join('');
  return `<?xml version="1.0"?><testsuites><testsuite name="${suite}">${body}</testsuite></testsuites>`;
}

/**
 * The three-test suite (test_a, test_b, test_c) the ingestion tests upload again and again, with the
 * tests in `failing` failed. `text` gives a failure's text (one shared text unless told) and `files`
 * names a source file per test.
 */
export function abcSuite(
  failing: readonly string[],
  o: { text?: (name: string) => string; files?: boolean } = {},
): string {
  return junitXml(
    ['test_a', 'test_b', 'test_c'].map((name) => ({
      name,
      ...(o.files ? { file: `src/${name}.py` } : {}),
      fail: failing.includes(name) ? (o.text?.(name) ?? 'AssertionError: boom') : false,
    })),
  );
}
