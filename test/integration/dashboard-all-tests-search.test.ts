// The all-tests page's search texts kept in memory (app/dashboard/test-search.ts), through the real
// HTTP stack on both engines: texts kept before an upload follow the tests it adds (list, count and
// search), the code-owner filter (read from the test rows) still combines with the search, any case
// is matched beyond ASCII, and a server keeping no texts (MAINLINE_KEPT_TEST_TEXTS=0, the database's
// search) answers the same pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app.ts';
import { type KeptAndNone, keptAndNone } from '../support/kept-and-none.ts';
import { junitXml, upload } from '../support/upload.ts';

const BASE = '/acme/repos/github.com/acme/web';

describe('the all-tests search texts kept in memory', () => {
  let kept: TestApp;
  let none: TestApp;
  let both: KeptAndNone;
  const page = (t: TestApp, query: string) => both.page(t, `${BASE}/tests${query === '' ? '' : `?${query}`}`);
  const send = async (t: TestApp, cases: Parameters<typeof junitXml>[0], token = both.token(t)) => {
    const res = await upload(t, token, [{ name: 'r.xml', content: junitXml(cases) }], {
      codeowners: '* @acme/web\n/src/payments/ @acme/payments\n',
    });
    expect(res.statusCode, res.body).toBe(200);
  };

  beforeAll(async () => {
    both = await keptAndNone((t, token) =>
      send(
        t,
        [
          { name: 'test_login', classname: 'auth.LoginSpec', file: 'src/auth/login.test.ts' },
          { name: 'test_refund', classname: 'pay.RefundSpec', file: 'src/payments/refund.test.ts' },
          { name: 'test_Überweisung', classname: 'pay.TransferSpec', file: 'src/payments/transfer.test.ts' },
          ...Array.from({ length: 51 }, (_, i) => ({
            name: `test_z${String(i).padStart(2, '0')}`,
            classname: 'misc.Spec',
            file: 'src/misc.test.ts',
          })),
        ],
        token,
      ),
    );
    ({ kept, none } = both);
  });
  afterAll(() => both.close());

  it('follows the tests an upload adds after the texts were kept', async () => {
    expect(await page(kept, 'q=refund')).toEqual({ names: ['test_refund'], count: '1 test match.' });
    expect((await page(kept, '')).count).toBe('54 tests.');
    await send(kept, [
      { name: 'test_refund_partial', classname: 'pay.RefundSpec', file: 'src/payments/refund.test.ts' },
      { name: 'test_login', classname: 'auth.LoginSpec', file: 'src/auth/login.test.ts' },
    ]);
    expect(await page(kept, 'q=REFUND')).toEqual({
      names: ['test_refund', 'test_refund_partial'],
      count: '2 tests match.',
    });
    expect((await page(kept, '')).count).toBe('55 tests.');
    expect((await page(kept, 'page=2')).names).toEqual([
      'test_z47',
      'test_z48',
      'test_z49',
      'test_z50',
      'test_Überweisung',
    ]);
  });

  it('matches any case beyond ASCII, takes LIKE wildcards literally, and combines with the owner filter', async () => {
    expect((await page(kept, 'q=%C3%BCberweisung')).names).toEqual(['test_Überweisung']);
    expect((await page(kept, 'q=%25')).names).toEqual([]);
    expect((await page(kept, 'q=_z0&page=1')).count).toBe('10 tests match.');
    expect((await page(kept, `q=pay.&owner=${encodeURIComponent('@acme/payments')}`)).names).toEqual([
      'test_refund',
      'test_refund_partial',
      'test_Überweisung',
    ]);
    expect((await page(kept, `file=payments&q=refund`)).names).toEqual([
      'test_refund',
      'test_refund_partial',
    ]);
  });

  it('answers what the database’s search answers', async () => {
    await send(none, [
      { name: 'test_refund_partial', classname: 'pay.RefundSpec', file: 'src/payments/refund.test.ts' },
    ]);
    for (const query of [
      '',
      'page=2',
      'q=refund',
      'q=SPEC&page=2',
      'file=src%2Fauth',
      'q=misc&file=misc',
      'q=nothing',
    ]) {
      expect(await page(kept, query), query).toEqual(await page(none, query));
    }
  });
});
