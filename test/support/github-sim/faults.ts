import type { Reply } from './http.ts';

/** What an injected fault answers. */
export type FaultResponse =
  /** A plain error status (500, 502, 503, 404, ...). */
  | { kind: 'error'; status: number; message?: string }
  /** 403 (or 429) with retry-after and a "secondary rate limit" message. */
  | { kind: 'secondary-rate-limit'; retryAfterSeconds?: number; status?: 403 | 429 }
  /** 403 (or 429) with x-ratelimit-remaining: 0 and x-ratelimit-reset. */
  | { kind: 'primary-rate-limit'; resetInSeconds?: number; status?: 403 | 429 };

export interface FaultRule {
  /** HTTP method to match (any when absent). */
  method?: string;
  /** Decoded request path: exact string, where `*` matches within one segment and `**` across segments; or a RegExp. */
  path: string | RegExp;
  /** How many matching requests fail (default 1). */
  times?: number;
  response: FaultResponse;
}

interface ActiveFault {
  method: string | null;
  path: RegExp;
  remaining: number;
  response: FaultResponse;
}

/** Failures injected into the next N requests that match a method and path. */
export class FaultInjector {
  readonly #active: ActiveFault[] = [];

  /** Add a fault; the first matching rule (in order of injection) answers a request. */
  inject(rule: FaultRule): void {
    this.#active.push({
      method: rule.method?.toUpperCase() ?? null,
      path: typeof rule.path === 'string' ? globToRegex(rule.path) : rule.path,
      remaining: rule.times ?? 1,
      response: rule.response,
    });
  }

  /** Shorthand: the next `times` requests matching fail with status. */
  fail(method: string, path: string | RegExp, status = 500, times = 1): void {
    this.inject({ method, path, times, response: { kind: 'error', status } });
  }

  clear(): void {
    this.#active.length = 0;
  }

  /** Faults that have not fired yet. */
  get pending(): number {
    return this.#active.reduce((sum, f) => sum + f.remaining, 0);
  }

  /** The reply of a fault matching this request (consuming it), or null. */
  take(method: string, path: string): Reply | null {
    const fault = this.#active.find(
      (f) => f.remaining > 0 && (f.method === null || f.method === method) && f.path.test(path),
    );
    if (!fault) return null;
    fault.remaining--;
    if (fault.remaining === 0) this.#active.splice(this.#active.indexOf(fault), 1);
    return faultReply(fault.response);
  }
}

function faultReply(response: FaultResponse): Reply {
  const docs = 'https://docs.github.com/rest';
  switch (response.kind) {
    case 'error':
      return {
        status: response.status,
        body: { message: response.message ?? 'Server Error (injected)', documentation_url: docs },
      };
    case 'secondary-rate-limit':
      return {
        status: response.status ?? 403,
        headers: { 'retry-after': String(response.retryAfterSeconds ?? 1) },
        body: {
          message:
            'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
          documentation_url: docs,
        },
      };
    case 'primary-rate-limit': {
      const reset = Math.ceil(Date.now() / 1000) + (response.resetInSeconds ?? 1);
      return {
        status: response.status ?? 403,
        headers: {
          'x-ratelimit-limit': '5000',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-used': '5000',
          'x-ratelimit-reset': String(reset),
        },
        body: { message: 'API rate limit exceeded for installation.', documentation_url: docs },
      };
    }
  }
}

function globToRegex(glob: string): RegExp {
  const source = glob
    .split(/(\*\*|\*)/)
    .map((part) => {
      if (part === '**') return '.*';
      if (part === '*') return '[^/]*';
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`);
}
