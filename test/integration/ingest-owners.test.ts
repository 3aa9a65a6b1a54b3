import { describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { storedTestId } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

describe('code owners of known tests follow the latest CODEOWNERS sent', () => {
  const t = useTestApp();

  const report = junitXml([
    { name: 'pays', file: 'src/payments/pay.test.ts' },
    { name: 'renders', file: 'src/web/page.test.ts' },
  ]);
  const owners = async (name: string) => {
    const res = await t.post(
      '/v1/flaky-tests/get-test-details',
      { repo: REPO, org_url_slug: 'acme', test_id: await storedTestId(t, name) },
      t.orgToken,
    );
    expect(res.statusCode).toBe(200);
    return res.json().test.codeowners as string[];
  };

  it('replaces owners that changed, for every test alike, and keeps them when an upload sends none', async () => {
    const first = '* @acme/web\n/src/payments/ @acme/payments\n';
    expect(
      (await upload(t, t.orgToken, [{ name: 'r.xml', content: report }], { sha: 'aaa1', codeowners: first }))
        .statusCode,
    ).toBe(200);
    expect(await owners('pays')).toEqual(['@acme/payments']);
    expect(await owners('renders')).toEqual(['@acme/web']);

    const second = '* @acme/frontend\n';
    expect(
      (await upload(t, t.orgToken, [{ name: 'r.xml', content: report }], { sha: 'aaa2', codeowners: second }))
        .statusCode,
    ).toBe(200);
    expect(await owners('pays')).toEqual(['@acme/frontend']);
    expect(await owners('renders')).toEqual(['@acme/frontend']);

    expect(
      (await upload(t, t.orgToken, [{ name: 'r.xml', content: report }], { sha: 'aaa3' })).statusCode,
    ).toBe(200);
    expect(await owners('pays')).toEqual(['@acme/frontend']);
  });

  it('replaces them too when the tests are looked up again (a change in between: nothing remembered holds)', async () => {
    const id = await storedTestId(t, 'renders');
    const override = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { repo: REPO, org_url_slug: 'acme', test_id: id, setting: 'NEVER_QUARANTINE' },
      t.orgToken,
    );
    expect(override.statusCode).toBe(200);
    const third = '* @acme/platform\n';
    expect(
      (await upload(t, t.orgToken, [{ name: 'r.xml', content: report }], { sha: 'aaa4', codeowners: third }))
        .statusCode,
    ).toBe(200);
    expect(await owners('pays')).toEqual(['@acme/platform']);
    expect(await owners('renders')).toEqual(['@acme/platform']);
  });
});
