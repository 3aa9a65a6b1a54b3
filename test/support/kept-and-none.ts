// Two servers for the all-tests page: one keeping the search texts in memory (the default) and one
// keeping none (MAINLINE_KEPT_TEST_TEXTS=0: every search in the database), each with organization
// acme's token and a signed-in dashboard cookie, for tests that ask both the same and compare.
import { expect } from 'vitest';
import { buildTestApp, type TestApp } from './app.ts';
import { getPage, signIn } from './dashboard.ts';

/** The test names of a list page's table, in order, and its count line. */
export function listed(body: string): { names: string[]; count: string } {
  return {
    names: [...body.matchAll(/<a class="test-name" href="[^"]+">([^<]+)<\/a>/g)].map((m) => m[1] as string),
    count: /<p role="status">([^<]*)<\/p>/.exec(body)?.[1] ?? '',
  };
}

export interface KeptAndNone {
  readonly kept: TestApp;
  readonly none: TestApp;
  token(t: TestApp): string;
  /** A dashboard page (`url` from the site's root) as listed, signed in, expected 200. */
  page(t: TestApp, url: string): Promise<{ names: string[]; count: string }>;
  close(): Promise<void>;
}

/** Both servers, each prepared by `prepare` (given its token) before it signs in. */
export async function keptAndNone(
  prepare: (t: TestApp, token: string) => Promise<void>,
): Promise<KeptAndNone> {
  const kept = await buildTestApp();
  const none = await buildTestApp({ MAINLINE_KEPT_TEST_TEXTS: '0' });
  const tokens = new Map<TestApp, string>();
  const cookies = new Map<TestApp, string>();
  for (const t of [kept, none]) {
    const token = await t.token('acme');
    tokens.set(t, token);
    await prepare(t, token);
    cookies.set(t, await signIn(t, token));
  }
  return {
    kept,
    none,
    token: (t) => tokens.get(t) as string,
    page: async (t, url) => {
      const res = await getPage(t, url, cookies.get(t));
      expect(res.statusCode).toBe(200);
      return listed(res.body);
    },
    close: async () => {
      await kept.close();
      await none.close();
    },
  };
}
