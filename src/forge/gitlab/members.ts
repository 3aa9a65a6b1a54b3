import type { ForgeRepo } from '../../app/ports.ts';
import { type GitLabClient, unless } from './client.ts';
import { projectPath } from './project.ts';

/** GitLab access levels as the role names the queue's command check understands (GitHub's). */
export function roleOfAccessLevel(level: number): string {
  if (level >= 50) return 'admin';
  if (level >= 40) return 'maintain';
  if (level >= 30) return 'write';
  if (level >= 20) return 'triage';
  if (level > 0) return 'read';
  return 'none';
}

/**
 * The user's role on the project from their effective membership (inherited included), as a
 * GitHub-style role name: Developer (30) is "write", the least that may drive the queue.
 */
export async function collaboratorPermission(
  client: GitLabClient,
  repo: ForgeRepo,
  login: string,
): Promise<string> {
  const users = await client.request<{ id: number; username: string }[]>(
    'GET',
    `/users?username=${encodeURIComponent(login)}`,
  );
  const user = users.data.find((u) => u.username.toLowerCase() === login.toLowerCase());
  if (user === undefined) return 'none';
  return accessRole(client, repo, user.id);
}

/** The role of a user by id (what GitLab's webhooks name): see collaboratorPermission. */
export async function accessRole(client: GitLabClient, repo: ForgeRepo, userId: number): Promise<string> {
  const res = await unless([404], null, () =>
    client.request<{ access_level: number; state?: string }>(
      'GET',
      `${projectPath(repo)}/members/all/${userId}`,
    ),
  );
  if (res === null || (res.data.state !== undefined && res.data.state !== 'active')) return 'none';
  return roleOfAccessLevel(res.data.access_level);
}
