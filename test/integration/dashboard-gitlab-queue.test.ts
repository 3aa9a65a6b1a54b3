// The dashboard names a queue's forge as the forge router picks it (GitLab's host, GitHub's, else
// plain git) and says which settings act there: on GitLab comments (a note on the merge request),
// commands and the status check (a commit status) work, while draft PRs for test branches and
// labels are GitHub's only. A plain-git queue in the same server still reads "no effect on plain git".
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getPage, signIn } from '../support/dashboard.ts';
import { GitLabScenario, GL_REPO } from '../support/gitlab-sim/index.ts';

// Real git and HTTP on a shared machine: a scenario takes a while to start.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const PLAIN = { host: 'git.example.com', owner: 'acme', name: 'tools' } as const;
const glBase = `/acme/repos/${GL_REPO.host}/${GL_REPO.owner}/${GL_REPO.name}/queues/main`;
const plainBase = `/acme/repos/${PLAIN.host}/${PLAIN.owner}/${PLAIN.name}/queues/main`;

/** The text of the <dd> after <dt>label</dt> in the page's settings, tags dropped. */
function fact(body: string, label: string): string {
  const dd = body.match(new RegExp(`<dt>${label}</dt><dd>([\\s\\S]*?)</dd>`))?.[1];
  if (dd === undefined) throw new Error(`no <dt>${label}</dt>`);
  return dd
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The hint beside a field of the settings form, tags dropped ('' when there is none). */
function fieldNote(body: string, name: string): string {
  const field = body.match(
    new RegExp(`<div class="field">(?:(?!<div class="field">)[\\s\\S])*?name="${name}"[\\s\\S]*?</div>`),
  )?.[0];
  if (field === undefined) throw new Error(`no field ${name}`);
  return (field.match(/<span class="hint">([\s\S]*?)<\/span>/)?.[1] ?? '').trim();
}

describe('the queue page of a GitLab queue', () => {
  let s: GitLabScenario;
  let cookie: string;

  beforeAll(async () => {
    s = await GitLabScenario.create({ createPrsForTestingBranches: true });
    // A plain-git queue beside it in the same organization and server.
    const repo = await s.post('/v1/git/createRepository', { repo: PLAIN });
    expect(repo.statusCode, repo.body).toBe(200);
    const queue = await s.post('/v1/createQueue', { repo: PLAIN, targetBranch: 'main' });
    expect(queue.statusCode, queue.body).toBe(200);
    cookie = await signIn(s.t, s.token);
  });
  afterAll(() => s.close());

  it('names GitLab and shows comments, commands and the status check as acting there', async () => {
    const res = await getPage(s.t, glBase, cookie);
    expect(res.statusCode).toBe(200);
    expect(fact(res.body, 'Forge')).toBe('GitLab');
    expect(res.body).not.toContain('plain git');
    expect(fact(res.body, 'Comments')).toBe('yes (a note on the merge request)');
    expect(fact(res.body, 'Commands')).toBe(
      'yes (/mainline merge and /mainline cancel in a merge request comment)',
    );
    expect(fact(res.body, 'Status check')).toMatch(/^yes \(the commit status mainline\/merge-queue/);
    // GitLab has no draft merge requests for test branches: that setting does nothing there.
    expect(fact(res.body, 'Draft PRs for test branches')).toBe('no effect on GitLab (set to yes)');
  });

  it('marks only the GitHub-only fields of its settings form', async () => {
    const res = await getPage(s.t, `${glBase}/settings`, cookie);
    expect(res.statusCode).toBe(200);
    for (const name of ['commentsEnabled', 'commandsEnabled', 'statusCheckEnabled'])
      expect(fieldNote(res.body, name), name).toBe('');
    for (const name of [
      'createPrsForTestingBranches',
      'extensionEnabled',
      'labelCommandsEnabled',
      'stateLabelsEnabled',
      'enqueueingLabel',
    ])
      expect(fieldNote(res.body, name), name).toBe('no effect on GitLab');
  });

  it('still shows a plain-git queue as plain git, where those settings have no effect', async () => {
    const res = await getPage(s.t, plainBase, cookie);
    expect(res.statusCode).toBe(200);
    expect(fact(res.body, 'Forge')).toBe('plain git (the built-in forge)');
    for (const label of ['Comments', 'Commands', 'Status check', 'Draft PRs for test branches'])
      expect(fact(res.body, label), label).toMatch(/^no effect on plain git \(set to (yes|no)\)$/);
    const form = await getPage(s.t, `${plainBase}/settings`, cookie);
    for (const name of [
      'commentsEnabled',
      'commandsEnabled',
      'statusCheckEnabled',
      'createPrsForTestingBranches',
    ])
      expect(fieldNote(form.body, name), name).toBe('no effect on plain git');
  });
});
