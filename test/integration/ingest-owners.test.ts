import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { junitXml, upload } from '../support/upload.ts';

describe('code owners of known tests follow the latest CODEOWNERS sent', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await buildTestApp();
    token = await t.token('acme');
  });
  afterAll(() => t.close());

  const report = junitXml([
    { name: 'pays', file: 'src/payments/pay.test.ts' },
    { name: 'renders', file: 'src/web/page.test.ts' },
  ]);
  const owners = async (name: string) => {
    const row = await t.db.database.db
      .selectFrom('test_cases')
      .select('id')
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    const res = await t.post(
      '/v1/flaky-tests/get-test-details',
      { repo: REPO, org_url_slug: 'acme', test_id: row.id },
      token,
    );
    expect(res.statusCode).toBe(200);
    return res.json().test.codeowners as string[];
  };

  it('replaces owners that changed, for every test alike, and keeps them when an upload sends none', async () => {
    const first = '* @acme/web\n/src/payments/ @acme/payments\n';
    expect(
      (await upload(t, token, [{ name: 'r.xml', content: report }], { sha: 'aaa1', codeowners: first }))
        .statusCode,
    ).toBe(200);
    expect(await owners('pays')).toEqual(['@acme/payments']);
    expect(await owners('renders')).toEqual(['@acme/web']);

    const second = '* @acme/frontend\n';
    expect(
      (await upload(t, token, [{ name: 'r.xml', content: report }], { sha: 'aaa2', codeowners: second }))
        .statusCode,
    ).toBe(200);
    expect(await owners('pays')).toEqual(['@acme/frontend']);
    expect(await owners('renders')).toEqual(['@acme/frontend']);

    expect((await upload(t, token, [{ name: 'r.xml', content: report }], { sha: 'aaa3' })).statusCode).toBe(
      200,
    );
    expect(await owners('pays')).toEqual(['@acme/frontend']);
  });

  it('replaces them too when the tests are looked up again (a change in between: nothing remembered holds)', async () => {
    const id = (
      await t.db.database.db
        .selectFrom('test_cases')
        .select('id')
        .where('name', '=', 'renders')
        .executeTakeFirstOrThrow()
    ).id;
    const override = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { repo: REPO, org_url_slug: 'acme', test_id: id, setting: 'NEVER_QUARANTINE' },
      token,
    );
    expect(override.statusCode).toBe(200);
    const third = '* @acme/platform\n';
    expect(
      (await upload(t, token, [{ name: 'r.xml', content: report }], { sha: 'aaa4', codeowners: third }))
        .statusCode,
    ).toBe(200);
    expect(await owners('pays')).toEqual(['@acme/platform']);
    expect(await owners('renders')).toEqual(['@acme/platform']);
  });
});
