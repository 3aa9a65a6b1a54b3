import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  baseTestCaseId,
  isUuidV5,
  parseUuid,
  repoFullName,
  testCaseId,
  URL_NAMESPACE,
  uuidV5,
} from '../../src/domain/testid/index.ts';

describe('uuidV5', () => {
  it('matches well-known v5 values in the URL and DNS namespaces', () => {
    // Python: uuid.uuid5(uuid.NAMESPACE_URL, 'https://example.com'), uuid.uuid5(uuid.NAMESPACE_DNS, 'python.org')
    expect(uuidV5('https://example.com', URL_NAMESPACE)).toBe('4fd35a71-71ef-5a55-a9d9-aa75c889a6d0');
    expect(uuidV5('python.org', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '886313e1-3b8a-5372-9b90-0c9aee199e5d',
    );
  });

  it('agrees with a v5 computed from node:crypto for random UTF-8 names', () => {
    const ns = parseUuid(URL_NAMESPACE)!;
    for (let i = 0; i < 100; i++) {
      const name = `${randomBytes(i).toString('base64')}#日本#🚀${i}`;
      const digest = createHash('sha1').update(ns).update(name, 'utf8').digest();
      digest[6] = (digest[6]! & 0x0f) | 0x50;
      digest[8] = (digest[8]! & 0x3f) | 0x80;
      const h = digest.subarray(0, 16).toString('hex');
      const expected = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
      expect(uuidV5(name)).toBe(expected);
    }
  });

  it('rejects a namespace that is not a UUID', () => {
    expect(() => uuidV5('x', 'not-a-uuid')).toThrow(/namespace/);
  });
});

describe('isUuidV5 / parseUuid', () => {
  it('recognises v5 in every textual form and rejects other versions and garbage', () => {
    expect(isUuidV5('a6e84936-3ee9-57d5-b041-ae124896f654')).toBe(true);
    expect(isUuidV5('A6E84936-3EE9-57D5-B041-AE124896F654')).toBe(true);
    expect(isUuidV5('a6e849363ee957d5b041ae124896f654')).toBe(true);
    expect(isUuidV5('{a6e84936-3ee9-57d5-b041-ae124896f654}')).toBe(true);
    expect(isUuidV5('urn:uuid:a6e84936-3ee9-57d5-b041-ae124896f654')).toBe(true);
    expect(isUuidV5('08e1c642-3a55-45cf-8bf9-b9d0b21785dd')).toBe(false); // v4
    expect(isUuidV5('a6e84936-3ee9-57d5-b041-ae124896f65')).toBe(false);
    expect(isUuidV5('trunk:12345')).toBe(false);
    expect(isUuidV5('')).toBe(false);
    expect(parseUuid('zzzzzzzz-3ee9-57d5-b041-ae124896f654')).toBeNull();
  });
});

describe('testCaseId (flaky.md §a.5 vectors)', () => {
  const common = {
    orgSlug: 'example_org',
    repoFullName: 'example_repo',
    file: 'src/lib.rs',
    classname: 'ExampleClass',
    parent: 'parent/fact/path',
    name: 'example_name',
  };

  it('computed id with variant', () => {
    expect(baseTestCaseId({ ...common, variant: 'unix' })).toBe('c869cb93-66e2-516d-a0ea-15ff4b413c3f');
    expect(testCaseId({ ...common, variant: 'unix' })).toBe('1bf61475-b542-5faf-aa85-e66a691257a3');
  });

  it('trunk: custom id with variant', () => {
    const input = { ...common, customId: 'trunk:12345', variant: 'unix' };
    expect(baseTestCaseId(input)).toBe('4392f63c-8dc9-5cec-bbdc-e7b90c2e5a6b');
    expect(testCaseId(input)).toBe('db8c5727-0fe9-560f-863f-7f3ee68df425');
  });

  it('existing v5 custom id: used as-is without a variant, re-hashed with one', () => {
    const customId = 'a6e84936-3ee9-57d5-b041-ae124896f654';
    expect(testCaseId({ ...common, customId })).toBe(customId);
    expect(baseTestCaseId({ ...common, customId, variant: 'unix' })).toBe(
      '8057218b-95e4-5373-afbe-c366d4058615',
    );
    expect(testCaseId({ ...common, customId, variant: 'unix' })).toBe('931cae54-0fcd-56eb-8eac-afa833699e53');
  });

  it('ignores a custom id that is a UUID of another version, or empty', () => {
    const computed = testCaseId({ ...common, variant: 'unix' });
    expect(testCaseId({ ...common, variant: 'unix', customId: '08e1c642-3a55-45cf-8bf9-b9d0b21785dd' })).toBe(
      computed,
    );
    expect(testCaseId({ ...common, variant: 'unix', customId: '' })).toBe(computed);
    expect(testCaseId({ ...common, variant: 'unix', customId: 'some-other-id' })).toBe(computed);
  });

  it('treats missing fields as empty strings (real Trunk staging id)', () => {
    // analytics-cli id.rs test_gen_info_id_real_staging_test: no file, no variant
    const id = testCaseId({
      orgSlug: 'trunk-staging-org',
      repoFullName: 'github.com/trunk-io/trunk',
      file: null,
      classname: 'modules/settings/repoName/__tests__/ticketing-integration.vitest.tsx',
      parent: 'modules/settings/repoName/__tests__/ticketing-integration.vitest.tsx',
      name: 'Ticketing Integration > should allow you to select a ticketing system',
    });
    expect(id).toBe('3f507aef-e834-523b-a8ad-edaba6b137be');
    expect(testCaseId({ orgSlug: 'o', repoFullName: 'r', name: 'n', file: undefined, variant: null })).toBe(
      uuidV5('o#r####n#JUNIT_TESTCASE'),
    );
  });

  it('changes when any identity field changes', () => {
    const base = testCaseId(common);
    for (const key of ['file', 'classname', 'parent', 'name'] as const) {
      expect(testCaseId({ ...common, [key]: 'other' }), key).not.toBe(base);
    }
    expect(testCaseId({ ...common, variant: 'linux' })).not.toBe(base);
  });

  it('builds the repo full name as host/owner/name', () => {
    expect(repoFullName({ host: 'github.com', owner: 'acme', name: 'web' })).toBe('github.com/acme/web');
  });
});
