import { describe, expect, it } from 'vitest';
import { createToken } from '../../src/app/tokens.ts';
import { RESERVED_ORG_SLUGS } from '../../src/domain/org-slug.ts';
import { findOrgBySlug, insertOrgIfAbsent } from '../../src/store/tenancy/orgs.ts';
import { runCli } from '../support/process.ts';
import { useTestApp } from '../support/use-test-app.ts';

/** An organization's dashboard is at /{slug}: a slug that is one of the server's own paths could never be reached. */
describe('organization slugs that collide with the server’s own paths', () => {
  const t = useTestApp();

  it('every first path segment the server routes (other than an organization) is reserved', () => {
    // The route tree below "/", one child a line: "├── v1/status (POST)", "├── login (GET, HEAD, POST)".
    const tree = t.app.printRoutes({ commonPrefix: false }).split('\n');
    const firstSegments = new Set(
      tree
        .map((line) => /^ {4}[├└]── ([^ ]+) \(/.exec(line)?.[1])
        .filter((path): path is string => path !== undefined)
        .map((path) => path.split('/')[0] as string)
        .filter((segment) => segment !== '' && !segment.startsWith(':') && !segment.startsWith('*')),
    );
    expect(firstSegments.size).toBeGreaterThan(5);
    expect([...firstSegments].filter((s) => !RESERVED_ORG_SLUGS.has(s))).toEqual([]);
  });

  it('mainline token create --org v1 (or login, docs, …) is refused and says why; no organization is made', async () => {
    for (const slug of ['v1', 'login', 'docs']) {
      const res = await runCli(['token', 'create', '--org', slug], t.db.env);
      expect(res.code, res.stderr).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain(
        `"${slug}" cannot be an organization slug: /${slug} is one of the server's own paths`,
      );
      expect(await findOrgBySlug(t.db.database.db, slug)).toBeUndefined();
    }
    // As an error of the API it is a 400 (VALIDATION_FAILED) with the same message.
    await expect(
      createToken(t.db.database.db, { orgSlug: 'metrics', name: 'x', now: 1 }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: expect.stringContaining('choose another slug'),
    });
    // A slug that only starts like one is fine.
    expect((await runCli(['token', 'create', '--org', 'v1-team'], t.db.env)).code).toBe(0);
  });

  it('an organization that already has a reserved slug (made before the rule) still gets tokens', async () => {
    await insertOrgIfAbsent(t.db.database.db, { id: crypto.randomUUID(), slug: 'assets', created_at: 1 });
    const created = await createToken(t.db.database.db, { orgSlug: 'assets', name: 'ci', now: 2 });
    expect(created.orgCreated).toBe(false);
    expect(created.token).toMatch(/^ml_/);
  });
});
