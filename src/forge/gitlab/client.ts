/** A GitLab REST API v4 answer that was not 2xx. */
export class GitLabApiError extends Error {
  override name = 'GitLabApiError';
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    detail: string,
  ) {
    super(`GitLab ${method} ${path} answered ${status}: ${detail}`);
  }
}

export type GitLabLog = {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
};

export interface GitLabClientOptions {
  /** The instance, e.g. https://gitlab.com (the API is under /api/v4). */
  baseUrl: string;
  /** A personal, project or group access token (sent as PRIVATE-TOKEN). */
  token: string;
  log?: GitLabLog;
  /** Retries of a 429 or 5xx answer or a network failure (default 2); never for merges. */
  retries?: number;
  /** First wait between retries in milliseconds (default 500, doubled each time). */
  retryBaseMs?: number;
}

const silent: GitLabLog = { info() {}, warn() {}, error() {} };

/** The project path as GitLab's `:id` (a URL-encoded full path). */
export function projectId(owner: string, name: string): string {
  return encodeURIComponent(`${owner}/${name}`);
}

/** Thin fetch-based client for the calls the GitLab forge makes. */
export class GitLabClient {
  readonly baseUrl: string;
  readonly log: GitLabLog;
  readonly #token: string;
  readonly #retries: number;
  readonly #retryBaseMs: number;

  constructor(options: GitLabClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#token = options.token;
    this.log = options.log ?? silent;
    this.#retries = options.retries ?? 2;
    this.#retryBaseMs = options.retryBaseMs ?? 500;
  }

  /** The token as git's HTTP basic credentials (GitLab takes any user name with a token as password). */
  gitAuthHeader(): string {
    return `Authorization: Basic ${Buffer.from(`oauth2:${this.#token}`).toString('base64')}`;
  }

  /** One call; `retry: false` for calls that must never be repeated blindly (merges). */
  async request<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: object,
    options: { retry?: boolean; raw?: boolean } = {},
  ): Promise<{ data: T; headers: Headers }> {
    const attempts = options.retry === false ? 0 : this.#retries;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(`${this.baseUrl}/api/v4${path}`, {
          method,
          headers: {
            'PRIVATE-TOKEN': this.#token,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(30_000),
        });
      } catch (error) {
        if (attempt < attempts) {
          await this.#wait(attempt);
          continue;
        }
        throw error;
      }
      if (res.ok) {
        const text = await res.text();
        const data = (options.raw ? text : text === '' ? null : JSON.parse(text)) as T;
        return { data, headers: res.headers };
      }
      const text = await res.text().catch(() => '');
      if ((res.status === 429 || res.status >= 500) && attempt < attempts) {
        await this.#wait(attempt);
        continue;
      }
      throw new GitLabApiError(res.status, method, path, messageOf(text));
    }
  }

  /** Every page of a list (following x-next-page), up to `max` items. */
  async list<T>(path: string, max = 1000): Promise<T[]> {
    const out: T[] = [];
    const sep = path.includes('?') ? '&' : '?';
    let page = '1';
    while (page !== '' && out.length < max) {
      const { data, headers } = await this.request<T[]>('GET', `${path}${sep}per_page=100&page=${page}`);
      out.push(...data);
      page = headers.get('x-next-page') ?? '';
    }
    return out;
  }

  async #wait(attempt: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, this.#retryBaseMs * 2 ** attempt));
  }
}

function messageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown; error?: unknown };
    const m = parsed.message ?? parsed.error;
    return typeof m === 'string' ? m : JSON.stringify(m ?? parsed);
  } catch {
    return text.slice(0, 200) || 'no message';
  }
}

/** The HTTP status of a GitLab API failure, else undefined. */
export function statusOf(error: unknown): number | undefined {
  return error instanceof GitLabApiError ? error.status : undefined;
}

/** `fn()`, or `fallback` when GitLab answers one of `statuses`. */
export async function unless<T>(statuses: number[], fallback: T, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const status = statusOf(error);
    if (status !== undefined && statuses.includes(status)) return fallback;
    throw error;
  }
}
