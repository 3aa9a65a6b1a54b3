// The plain-git forge remembers branch names git accepted and `.mainline.yaml` at a branch head in
// the app's caches (app/caches.ts), one set per app: a second app asks git itself. git is run through
// a wrapper on PATH that logs each call, so the test counts the processes a read starts.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ForgeRepo } from '../../src/app/ports.ts';
import { GitRepositoryForge } from '../../src/forge/git-repository-forge.ts';
import { createForge } from '../../src/forge/router.ts';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { gitEnv } from '../support/git-fixture.ts';

const REPO: ForgeRepo = { id: 'r-branch-caches', host: 'git.local', owner: 'acme', name: 'widgets' };
const DEV = { name: 'Dev Eloper', email: 'dev@example.com' };

describe('the plain-git forge caches', () => {
  let dir: string;
  let log: string;
  let path: string | undefined;
  const apps: TestApp[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mainline-branch-caches-'));
    log = join(dir, 'git.log');
    writeFileSync(log, '');
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const wrapper = join(dir, 'bin', 'git');
    execFileSync('mkdir', ['-p', join(dir, 'bin')]);
    writeFileSync(wrapper, `#!/bin/sh\necho "$1" >> '${log}'\nexec '${real}' "$@"\n`);
    chmodSync(wrapper, 0o755);
    path = process.env['PATH'];
    process.env['PATH'] = `${join(dir, 'bin')}:${path ?? ''}`;
  });

  afterAll(async () => {
    process.env['PATH'] = path;
    for (const t of apps) await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A test app and the forge its server builds (createForge with the app's caches). */
  async function appForge(): Promise<GitRepositoryForge> {
    const t = await buildTestApp({ MAINLINE_GIT_ROOT: join(dir, 'repos') });
    apps.push(t);
    const forge = createForge(t.config, { db: t.db.database.db, caches: t.caches });
    expect(forge).toBeInstanceOf(GitRepositoryForge);
    return forge as GitRepositoryForge;
  }

  const calls = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);

  it('keeps what one app learnt of a branch to that app', async () => {
    const first = await appForge();
    const bare = await first.ensureRepository(REPO);
    const git = (args: string[], input?: string) =>
      execFileSync('git', [`--git-dir=${bare}`, ...args], {
        env: gitEnv(DEV),
        encoding: 'utf8',
        ...(input === undefined ? {} : { input }),
      }).trim();
    const blob = git(['hash-object', '-w', '--stdin'], 'required_statuses: [ci]\n');
    const tree = git(['mktree'], `100644 blob ${blob}\t.mainline.yaml\n`);
    git(['update-ref', 'refs/heads/main', git(['commit-tree', tree, '-m', 'config'])]);
    const expected = { serviceConfig: ['ci'], branchProtection: null, flakeProtection: null };

    writeFileSync(log, '');
    expect(await first.requiredStatuses(REPO, 'main')).toEqual(expected);
    expect(calls()).toContain('check-ref-format');
    // Again, the head unchanged: the app's memo answers, and git is not started at all.
    writeFileSync(log, '');
    expect(await first.requiredStatuses(REPO, 'main')).toEqual(expected);
    expect(calls()).toEqual([]);

    // Another app on the same repository knows nothing of the first one's branch: it asks git.
    const second = await appForge();
    writeFileSync(log, '');
    expect(await second.requiredStatuses(REPO, 'main')).toEqual(expected);
    expect(calls().filter((c) => c === 'check-ref-format')).toHaveLength(1);
  });
});
