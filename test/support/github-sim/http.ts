import type { IncomingMessage } from 'node:http';
import type { Actor } from './auth.ts';
import type { Core, RepoState, Tx } from './state.ts';
import type { JsonObject } from './types.ts';

/** An error answered as GitHub does: `{message, documentation_url, ...extra}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: JsonObject = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Who may call a route: repository credentials (PAT / installation token), an app JWT, or the PAT's user. */
export type RouteAuth = 'repo' | 'app' | 'user';

export interface RequestContext {
  params: Record<string, string>;
  query: URLSearchParams;
  body: JsonObject;
  actor: Actor;
  /** Base URL of the simulator (for url fields and Link headers). */
  base: string;
  /** The request's path and query, for Link headers. */
  url: URL;
  core: Core;
  tx: Tx;
}

/** The repository named by the owner and repo path parameters (404 if unknown or out of the token's reach). */
export function repoOf(ctx: RequestContext): RepoState {
  const owner = ctx.params['owner'] ?? '';
  const reach = ctx.actor.installationOwner;
  if (reach !== null && reach.toLowerCase() !== owner.toLowerCase()) throw new HttpError(404, 'Not Found');
  return ctx.core.repo(owner, ctx.params['repo'] ?? '');
}

export interface Route {
  method: string;
  regex: RegExp;
  names: string[];
  auth: RouteAuth;
  handler: (ctx: RequestContext) => Promise<Reply>;
}

/** A route from a template: `{name}` is one path segment, `{name+}` one or more (e.g. a branch with slashes). */
export function route(
  method: string,
  template: string,
  handler: (ctx: RequestContext) => Promise<Reply>,
  auth: RouteAuth = 'repo',
): Route {
  const names: string[] = [];
  const source = template
    .split(/(\{[a-z_]+\+?\})/i)
    .map((part) => {
      const param = /^\{([a-z_]+)(\+?)\}$/i.exec(part);
      if (!param) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(param[1] ?? '');
      return param[2] === '+' ? '(.+?)' : '([^/]+)';
    })
    .join('');
  return { method, regex: new RegExp(`^${source}$`), names, auth, handler };
}

/** The route matching a raw (still percent-encoded) path, with its decoded parameters. */
export function matchRoute(
  routes: Route[],
  method: string,
  rawPath: string,
): { route: Route; params: Record<string, string> } | null {
  for (const candidate of routes) {
    if (candidate.method !== method) continue;
    const match = candidate.regex.exec(rawPath);
    if (!match) continue;
    const params: Record<string, string> = {};
    candidate.names.forEach((name, i) => {
      params[name] = safeDecode(match[i + 1] ?? '');
    });
    return { route: candidate, params };
  }
  return null;
}

export function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export async function readBody(req: IncomingMessage, limit = 16 * 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) throw new HttpError(413, 'Payload too large');
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/** The JSON object of a request body ({} when empty); 400 "Problems parsing JSON" otherwise. */
export function parseJsonBody(raw: Buffer): JsonObject {
  if (raw.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HttpError(400, 'Problems parsing JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError(400, 'Problems parsing JSON');
  }
  return value as JsonObject;
}

function invalid(field: string, problem: string): HttpError {
  return new HttpError(422, `Invalid request.\n\n${problem}`, {
    errors: [{ resource: 'Request', field, code: 'invalid', message: problem }],
  });
}

/** A required non-empty string field (422 otherwise). */
export function requireString(body: JsonObject, field: string): string {
  const value = body[field];
  if (value === undefined || value === null) throw invalid(field, `"${field}" wasn't supplied.`);
  if (typeof value !== 'string' || value === '') throw invalid(field, `"${field}" is not a valid string.`);
  return value;
}

export function optionalString(body: JsonObject, field: string): string | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalid(field, `"${field}" is not a valid string.`);
  return value;
}

export function optionalBoolean(body: JsonObject, field: string): boolean | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'boolean') throw invalid(field, `"${field}" is not a boolean.`);
  return value;
}

/** One of the allowed values, or null when absent. */
export function optionalEnum<T extends string>(
  body: JsonObject,
  field: string,
  allowed: readonly T[],
): T | null {
  const value = optionalString(body, field);
  if (value === null) return null;
  const found = allowed.find((a) => a === value);
  if (found === undefined) throw invalid(field, `"${field}" must be one of ${allowed.join(', ')}.`);
  return found;
}

/** A positive integer path parameter (404 otherwise, as GitHub does for /pulls/abc). */
export function intParam(ctx: RequestContext, name: string): number {
  const value = ctx.params[name] ?? '';
  if (!/^\d{1,15}$/.test(value)) throw new HttpError(404, 'Not Found');
  return Number(value);
}

/** A page of items per `per_page` (default 30, max 100) and `page`, with GitHub's Link header. */
export function paginate<T>(
  ctx: RequestContext,
  items: T[],
): { items: T[]; headers: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, Number(ctx.query.get('per_page') ?? 30) || 30));
  const page = Math.max(1, Number(ctx.query.get('page') ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (n: number, rel: string) => {
    const url = new URL(ctx.url.pathname + ctx.url.search, ctx.base);
    url.searchParams.set('per_page', String(perPage));
    url.searchParams.set('page', String(n));
    return `<${url.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(1, 'first'), link(page - 1, 'prev'));
  if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
  return {
    items: items.slice((page - 1) * perPage, page * perPage),
    headers: links.length > 0 ? { link: links.join(', ') } : {},
  };
}

export function ok(body: unknown, status = 200, headers: Record<string, string> = {}): Reply {
  return { status, body, headers };
}

export function noContent(): Reply {
  return { status: 204 };
}
