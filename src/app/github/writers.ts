import { Lru } from '../../lib/lru.ts';
import type { Forge, ForgeRepo } from '../ports.ts';

/** Associations that may be a writer; any other (CONTRIBUTOR, FIRST_TIMER, NONE, …) is refused at once. */
const MAYBE_WRITER = new Set(['OWNER', 'MEMBER', 'COLLABORATOR']);
/** Roles that may drive the queue: those that can push to the repository. */
const WRITER_ROLES = new Set(['admin', 'maintain', 'write']);
/** A user's role is asked again after this long, so a revoked collaborator loses the queue within a minute. */
export const WRITER_TTL_MS = 60_000;
/**
 * Users remembered per process: a command is one comment by a person, so ten thousand (a few hundred
 * bytes each) covers every active commenter of a large installation within the minute the answers live.
 */
const WRITER_ENTRIES = 10_000;

/** Recently asked roles, by repository and login. One per forge on the app (app/caches.ts). */
export class WriterCache {
  readonly #roles = new Lru<{ role: string; at: number }>(WRITER_ENTRIES);

  get(repoId: string, login: string, now: number): string | undefined {
    const hit = this.#roles.get(`${repoId}\n${login.toLowerCase()}`);
    return hit !== undefined && now - hit.at < WRITER_TTL_MS ? hit.role : undefined;
  }

  set(repoId: string, login: string, role: string, now: number): void {
    this.#roles.set(`${repoId}\n${login.toLowerCase()}`, { role, at: now });
  }
}

/**
 * Whether the comment's author may drive the queue (write access to the repository): the comment's
 * author_association first (outsiders are refused without asking GitHub), then the collaborator
 * permission, cached briefly. Answers why not, in words for the PR's comment, or null when allowed.
 */
export async function refusalOf(
  forge: Forge,
  cache: WriterCache,
  repo: ForgeRepo,
  login: string | undefined,
  association: string | undefined,
  now: number,
): Promise<string | null> {
  const full = `${repo.owner}/${repo.name}`;
  if (login === undefined) return 'the comment has no author';
  if (!MAYBE_WRITER.has((association ?? 'NONE').toUpperCase())) {
    return `@${login} is not a member or collaborator of ${full} (author association ${association ?? 'NONE'}); only users with write access can drive the merge queue`;
  }
  return roleRefusalOf(forge, cache, repo, login, now);
}

/**
 * Whether `login` has write access to the repository, from its collaborator permission alone (cached
 * as above): for events that carry no author association, such as who added or removed a label.
 * Answers why not, in words, or null when allowed.
 */
export async function roleRefusalOf(
  forge: Forge,
  cache: WriterCache,
  repo: ForgeRepo,
  login: string,
  now: number,
): Promise<string | null> {
  let role = cache.get(repo.id, login, now);
  if (role === undefined) {
    role =
      forge.collaboratorPermission === undefined ? 'none' : await forge.collaboratorPermission(repo, login);
    cache.set(repo.id, login, role, now);
  }
  if (WRITER_ROLES.has(role)) return null;
  return `@${login} has ${role} access to ${repo.owner}/${repo.name}; only users with write, maintain or admin access can drive the merge queue`;
}
