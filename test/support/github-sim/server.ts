import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Actor } from './auth.ts';
import type { FaultInjector } from './faults.ts';
import { HttpError, matchRoute, parseJsonBody, type Reply, readBody, safeDecode } from './http.ts';
import { actionRoutes } from './routes-actions.ts';
import { checkRoutes } from './routes-checks.ts';
import { gitRoutes } from './routes-git.ts';
import { labelRoutes } from './routes-labels.ts';
import { pullRoutes } from './routes-pulls.ts';
import type { Core } from './state.ts';
import type { RequestRecord } from './types.ts';

/** Specific routes first: `commits/{ref+}/status` must win over `commits/{ref+}`. */
const ROUTES = [...checkRoutes, ...pullRoutes, ...labelRoutes, ...gitRoutes, ...actionRoutes];
const WITH_BODY = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

export interface ServerLog {
  requests: RequestRecord[];
  /** Unexpected errors (answered 500): a simulator bug or an unsupported input. */
  errors: Error[];
}

/** Start the REST server on 127.0.0.1 (port chosen by the OS). */
export async function startServer(core: Core, faults: FaultInjector, log: ServerLog): Promise<Server> {
  const server = createServer((req, res) => {
    handle(core, faults, log, req, res).catch((error: unknown) => {
      log.errors.push(error instanceof Error ? error : new Error(String(error)));
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  core.base = `http://127.0.0.1:${port}`;
  return server;
}

async function handle(
  core: Core,
  faults: FaultInjector,
  log: ServerLog,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const url = new URL(req.url ?? '/', core.base);
  const rawPath = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
  const path = safeDecode(rawPath);
  let reply: Reply;
  let fault = false;
  try {
    const raw = await readBody(req);
    const injected = faults.take(method, path);
    if (injected) {
      reply = injected;
      fault = true;
    } else {
      reply = await dispatch(core, method, rawPath, url, raw, req.headers.authorization);
    }
  } catch (error) {
    reply = errorReply(error, log);
  }
  log.requests.push({ method, path, query: url.search, status: reply.status, fault });
  send(res, reply);
}

async function dispatch(
  core: Core,
  method: string,
  rawPath: string,
  url: URL,
  raw: Buffer,
  authorization: string | undefined,
): Promise<Reply> {
  const found = matchRoute(ROUTES, method, rawPath);
  if (!found) throw new HttpError(404, 'Not Found');
  const credentials = core.credentials;
  let actor: Actor;
  if (found.route.auth === 'app') {
    credentials.appCaller(authorization);
    const app = credentials.app;
    actor = {
      login: `${app?.slug ?? 'app'}[bot]`,
      type: 'Bot',
      appId: app?.id ?? null,
      installationOwner: null,
    };
  } else {
    actor = credentials.repoCaller(authorization);
    if (found.route.auth === 'user' && actor.type === 'Bot') {
      throw new HttpError(403, 'Resource not accessible by integration');
    }
  }
  const body = WITH_BODY.has(method) ? parseJsonBody(raw) : {};
  const { value } = await core.mutate((tx) =>
    found.route.handler({
      params: found.params,
      query: url.searchParams,
      body,
      actor,
      base: core.base,
      url,
      core,
      tx,
    }),
  );
  return value;
}

function errorReply(error: unknown, log: ServerLog): Reply {
  const docs = 'https://docs.github.com/rest';
  if (error instanceof HttpError) {
    return {
      status: error.status,
      headers: error.headers,
      body: { message: error.message, ...error.extra, documentation_url: docs },
    };
  }
  const err = error instanceof Error ? error : new Error(String(error));
  log.errors.push(err);
  return { status: 500, body: { message: `Simulator error: ${err.message}`, documentation_url: docs } };
}

function send(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string> = {
    'x-github-request-id': randomUUID(),
    'x-github-api-version-selected': '2022-11-28',
    'x-ratelimit-limit': '5000',
    'x-ratelimit-remaining': '4999',
    'x-ratelimit-used': '1',
    'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 3600),
    'x-ratelimit-resource': 'core',
    ...reply.headers,
  };
  if (reply.status === 204 || reply.body === undefined) {
    res.writeHead(reply.status, headers).end();
    return;
  }
  const text = JSON.stringify(reply.body);
  headers['content-type'] = 'application/json; charset=utf-8';
  headers['content-length'] = String(Buffer.byteLength(text));
  res.writeHead(reply.status, headers).end(text);
}
