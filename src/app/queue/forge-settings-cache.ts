import type { AppContext } from '../context.ts';
import type { Forge, ForgeRepo } from '../ports.ts';

type RequiredStatuses = Awaited<ReturnType<Forge['requiredStatuses']>>;

const keyOf = (host: string, owner: string, name: string) =>
  `${host.toLowerCase()}\n${owner.toLowerCase()}\n${name.toLowerCase()}`;

/**
 * What a GitHub or GitLab repository's branch says about its queue (required statuses from
 * `.mainline.yaml`, GitHub's branch protection and rulesets or GitLab's "Pipelines must succeed"; the
 * file's flake protection), remembered for getQueue only, so a repeated read asks the forge nothing. An
 * entry is used only while the queue's state names the branch head it was read at (a push to the branch
 * moves the state's target head, through the push webhook or the runner, on every replica); on GitHub
 * it is also dropped when this process receives a push, branch_protection_rule or repository_ruleset
 * webhook of its repository (or a ruleset webhook of its owner), and it is never used after ttlMs: a
 * setting may change without a push, and another replica may have received that webhook, so a memo is
 * stale for at most the TTL. Least recently used entries are dropped first. Merge decisions never read
 * it (the queue runner and submitPullRequest call the forge themselves).
 */
export class ForgeSettingsMemo {
  readonly #max: number;
  readonly #ttlMs: number;
  readonly #entries = new Map<string, { at: number; head: string; value: RequiredStatuses }>();

  /** max: branches remembered at once (0 keeps none); ttlMs: how long an entry may be used. */
  constructor(max: number, ttlMs: number) {
    this.#max = max;
    this.#ttlMs = ttlMs;
  }

  /** head: the branch head the queue's state names now; an entry read at another head is not used. */
  async read(
    repo: ForgeRepo,
    branch: string,
    head: string,
    now: number,
    fetch: () => Promise<RequiredStatuses>,
  ): Promise<RequiredStatuses> {
    const key = `${keyOf(repo.host, repo.owner, repo.name)}\n${branch}`;
    const hit = this.#entries.get(key);
    if (hit !== undefined && hit.head === head && now - hit.at < this.#ttlMs && now >= hit.at) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      return hit.value;
    }
    const value = await fetch();
    if (this.#max === 0 || this.#ttlMs === 0) return value;
    this.#entries.delete(key);
    this.#entries.set(key, { at: now, head, value });
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#max) break;
      this.#entries.delete(oldest);
    }
    return value;
  }

  /**
   * Drops what is remembered of one branch (branch given), of a repository (name given) or of every
   * repository of an owner (name null).
   */
  forget(host: string, owner: string, name: string | null, branch?: string): void {
    const prefix = name === null ? keyOf(host, owner, '') : `${keyOf(host, owner, name)}\n${branch ?? ''}`;
    for (const key of [...this.#entries.keys()])
      if (branch === undefined ? key.startsWith(prefix) : key === prefix) this.#entries.delete(key);
  }
}

/** The webhook events after which a memo of the repository (or owner) is dropped. */
const CHANGES = new Set(['push', 'branch_protection_rule', 'repository_ruleset']);

/** Called for every verified GitHub delivery this process receives. */
export function forgetOnWebhook(
  ctx: AppContext,
  event: string,
  payload: {
    ref?: unknown;
    repository?: { name?: unknown; owner?: { login?: unknown } };
    organization?: { login?: unknown };
  },
): void {
  const host = ctx.config.github?.host;
  if (host === undefined || !CHANGES.has(event)) return;
  const owner = payload.repository?.owner?.login;
  const name = payload.repository?.name;
  if (typeof owner === 'string' && typeof name === 'string') {
    // A push changes the .mainline.yaml of its own branch only; a tag push changes none.
    const ref = typeof payload.ref === 'string' ? payload.ref : '';
    if (event === 'push' && ref.startsWith('refs/tags/')) return;
    const branch =
      event === 'push' && ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : undefined;
    ctx.caches.forgeSettings.forget(host, owner, name, branch);
  } else if (typeof payload.organization?.login === 'string')
    ctx.caches.forgeSettings.forget(host, payload.organization.login, null);
}

/**
 * requiredStatuses for display (getQueue) of a branch whose queue's state names `head` as its tip: from
 * the memo for a repository on the configured GitHub or GitLab host, straight from the forge otherwise
 * (the plain-git forge keys its own memo by the branch's tip, read from its ref files).
 */
export function requiredStatusesForRead(
  ctx: AppContext,
  forge: Forge,
  repo: ForgeRepo,
  branch: string,
  head: string,
): Promise<RequiredStatuses> {
  const host = repo.host.toLowerCase();
  const remembered = [ctx.config.github?.host, ctx.config.gitlab?.host].some(
    (h) => h !== undefined && h.toLowerCase() === host,
  );
  if (!remembered) return forge.requiredStatuses(repo, branch);
  return ctx.caches.forgeSettings.read(repo, branch, head, ctx.now(), () =>
    forge.requiredStatuses(repo, branch),
  );
}
