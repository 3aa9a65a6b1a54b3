import { afterEach, describe, expect, it } from 'vitest';
import { validGitLabToken } from '../../src/app/gitlab/events.ts';
import { grantNamespace, listNamespaceGrants, revokeNamespace } from '../../src/app/gitlab/grants.ts';
import { createToken } from '../../src/app/tokens.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { roleOfAccessLevel } from '../../src/forge/gitlab/members.ts';
import { statusState } from '../../src/forge/gitlab/statuses.ts';
import { repoIsGranted } from '../../src/store/forge/grants.ts';
import { findOrgBySlug } from '../../src/store/tenancy/orgs.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { runCli } from '../support/process.ts';

describe('GitLab settings, namespace grants and the small mappings', () => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.cleanup();
    db = undefined;
  });

  it('reads MAINLINE_GITLAB_*: gitlab.com by default, the host from the URL, and refuses a bad URL or a missing token', () => {
    expect(loadConfig({}).gitlab).toBeUndefined();
    expect(loadConfig({ MAINLINE_GITLAB_TOKEN: 't' }).gitlab).toEqual({
      url: 'https://gitlab.com',
      host: 'gitlab.com',
      token: 't',
      webhookSecret: undefined,
      createPipelines: false,
    });
    const selfManaged = loadConfig({
      MAINLINE_GITLAB_TOKEN: 't',
      MAINLINE_GITLAB_URL: 'https://git.example.com:8443/',
      MAINLINE_GITLAB_WEBHOOK_SECRET: 's',
      MAINLINE_GITLAB_CREATE_PIPELINES: 'true',
    }).gitlab;
    expect(selfManaged).toMatchObject({
      url: 'https://git.example.com:8443',
      host: 'git.example.com:8443',
      webhookSecret: 's',
      createPipelines: true,
    });
    // Per project: full paths, compared without case.
    expect(
      loadConfig({ MAINLINE_GITLAB_TOKEN: 't', MAINLINE_GITLAB_CREATE_PIPELINES: 'Acme/App, acme/tools/api' })
        .gitlab?.createPipelines,
    ).toEqual(['acme/app', 'acme/tools/api']);
    expect(() =>
      loadConfig({ MAINLINE_GITLAB_TOKEN: 't', MAINLINE_GITLAB_CREATE_PIPELINES: 'acme/app,yes' }),
    ).toThrow(/MAINLINE_GITLAB_CREATE_PIPELINES .*"yes" is not a project path/);
    expect(() => loadConfig({ MAINLINE_GITLAB_URL: 'https://gitlab.com' })).toThrow(ConfigError);
    expect(() => loadConfig({ MAINLINE_GITLAB_TOKEN: 't', MAINLINE_GITLAB_URL: 'ftp://x' })).toThrow(
      /MAINLINE_GITLAB_URL/,
    );
  });

  it('a namespace is granted to one organization; its repositories are granted only to it; revoking takes it back', async () => {
    db = await createTestDatabase();
    const q = db.database.db;
    await createToken(q, { orgSlug: 'acme', name: 't', now: 1 });
    await createToken(q, { orgSlug: 'other', name: 't', now: 1 });
    expect(
      await grantNamespace(q, { orgSlug: 'acme', host: 'gitlab.com', namespace: 'Acme/Backend', now: 1 }),
    ).toEqual({ created: true });
    expect(
      await grantNamespace(q, { orgSlug: 'acme', host: 'gitlab.com', namespace: 'acme/backend', now: 2 }),
    ).toEqual({ created: false });
    await expect(
      grantNamespace(q, { orgSlug: 'other', host: 'gitlab.com', namespace: 'acme/backend', now: 3 }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(
      grantNamespace(q, { orgSlug: 'acme', host: 'gitlab.com', namespace: '../etc', now: 3 }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await listNamespaceGrants(q, 'gitlab.com')).map((g) => [g.org_slug, g.owner])).toEqual([
      ['acme', 'Acme/Backend'],
    ]);
    const repoOf = async (slug: string) => {
      const org = await findOrgBySlug(q, slug);
      if (org === undefined) throw new Error(`no organization ${slug}`);
      const id = `repo-${slug}`;
      await q
        .insertInto('repositories')
        .values({
          id,
          org_id: org.id,
          host: 'gitlab.com',
          owner: 'acme/backend',
          name: 'api',
          host_key: 'gitlab.com',
          owner_key: 'acme/backend',
          name_key: 'api',
          created_at: 1,
        } as never)
        .execute();
      return id;
    };
    const mine = await repoOf('acme');
    const theirs = await repoOf('other');
    expect(await repoIsGranted(q, mine)).toBe(true);
    expect(await repoIsGranted(q, theirs)).toBe(false);
    await expect(
      revokeNamespace(q, { orgSlug: 'other', host: 'gitlab.com', namespace: 'acme/backend' }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await revokeNamespace(q, { orgSlug: 'acme', host: 'gitlab.com', namespace: 'acme/backend' });
    expect(await repoIsGranted(q, mine)).toBe(false);
  });

  it('mainline gitlab grant, list (table and --json) and revoke a namespace on the configured host', async () => {
    db = await createTestDatabase();
    await createToken(db.database.db, { orgSlug: 'acme', name: 'ci', now: Date.now() });
    const env = { ...db.env, MAINLINE_GITLAB_TOKEN: 't', MAINLINE_GITLAB_URL: 'https://git.example.com' };
    const granted = await runCli(['gitlab', 'grant', '--org', 'acme', '--namespace', 'acme/backend'], env);
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.stderr).toContain('granted: organization "acme" may act on git.example.com/acme/backend');
    const again = await runCli(['gitlab', 'grant', '--org', 'acme', '--namespace', 'acme/backend'], env);
    expect(again.stderr).toContain('already granted');
    const table = await runCli(['gitlab', 'list'], env);
    expect(table.stdout.trim().split('\n')).toEqual([
      'ORG\tHOST\tNAMESPACE',
      'acme\tgit.example.com\tacme/backend',
    ]);
    const json = await runCli(['gitlab', 'list', '--org', 'acme', '--json'], env);
    expect(JSON.parse(json.stdout)).toEqual([
      { org: 'acme', host: 'git.example.com', namespace: 'acme/backend', grantedAt: expect.any(String) },
    ]);
    const revoked = await runCli(['gitlab', 'revoke', '--org', 'acme', '--namespace', 'acme/backend'], env);
    expect(revoked.stderr).toContain(
      'revoked: organization "acme" may no longer act on git.example.com/acme/backend',
    );
    expect(await listNamespaceGrants(db.database.db, 'git.example.com')).toEqual([]);
    const missing = await runCli(['gitlab', 'grant', '--org', 'acme'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('gitlab grant needs --namespace');
  }, 180_000);

  it('maps access levels, job statuses and the webhook token check', () => {
    expect([50, 40, 30, 20, 10, 0].map(roleOfAccessLevel)).toEqual([
      'admin',
      'maintain',
      'write',
      'triage',
      'read',
      'none',
    ]);
    expect(
      ['success', 'skipped', 'failed', 'canceled', 'running', 'manual'].map((s) => statusState(s)),
    ).toEqual(['success', 'success', 'failure', 'error', 'pending', 'pending']);
    expect(statusState('failed', true)).toBe('success');
    expect(validGitLabToken('secret', 'secret')).toBe(true);
    expect(validGitLabToken('secret', 'secreT')).toBe(false);
    expect(validGitLabToken('secret', 'secret-longer')).toBe(false);
    expect(validGitLabToken('secret', undefined)).toBe(false);
  });
});
