/** Git over HTTP at `/<full path>.git/...`, as GitLab serves it, through the git CLI. */
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { Request } from './model.ts';

/** The paths of git's smart HTTP protocol under a project (`/<full path>.git/...`). */
export const GIT_HTTP = /\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;

export interface GitHttpContext {
  /** The folder holding every project's bare repository. */
  readonly root: string;
  /** The basic-auth password git must send. */
  readonly token: string;
  /** Where each answer is recorded. */
  readonly requests: Request[];
  /** Runs after a push was answered, with the push's options (`-o ci.skip`). */
  afterPush(options: readonly string[]): Promise<void>;
}
/**
 * Git's smart HTTP protocol through `git http-backend` (CGI), with the token as the basic-auth
 * password, as GitLab takes it. afterPush sends the events of a push to a merge request's branch.
 */
export async function serveGitHttp(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  body: Buffer,
  ctx: GitHttpContext,
): Promise<void> {
  const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  const password =
    basic === undefined ? undefined : Buffer.from(basic, 'base64').toString().split(':').slice(1).join(':');
  if (password !== ctx.token) {
    ctx.requests.push({ method: req.method ?? 'GET', path: url.pathname, status: 401 });
    res.writeHead(401, { 'www-authenticate': 'Basic realm="GitLab"' });
    res.end('HTTP Basic: Access denied');
    return;
  }
  const child = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_PROJECT_ROOT: ctx.root,
      GIT_HTTP_EXPORT_ALL: '1',
      REMOTE_USER: 'oauth2',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ''),
      REQUEST_METHOD: req.method ?? 'GET',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      CONTENT_LENGTH: String(body.length),
      HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
      GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
    },
  });
  const out: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  // http-backend may answer before it read the whole body (a refused push): that is no error here.
  child.stdin.on('error', () => {});
  child.stdin.end(body);
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', () => resolve());
  });
  const all = Buffer.concat(out);
  const split = all.indexOf('\r\n\r\n');
  const head = split < 0 ? '' : all.subarray(0, split).toString('latin1');
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of head.split('\r\n')) {
    const at = line.indexOf(':');
    if (at < 0) continue;
    const name = line.slice(0, at).trim().toLowerCase();
    const value = line.slice(at + 1).trim();
    if (name === 'status') status = Number.parseInt(value, 10) || 200;
    else headers[name] = value;
  }
  ctx.requests.push({ method: req.method ?? 'GET', path: url.pathname, status });
  res.writeHead(status, headers);
  res.end(split < 0 ? all : all.subarray(split + 4));
  // Merge requests read their heads from the branches: keep their refs current after a push.
  if (url.pathname.endsWith('/git-receive-pack')) await ctx.afterPush(pushOptions(body, req));
}

/**
 * The push options of a receive-pack request: pkt-lines after the commands' flush, when the first
 * command announced the `push-options` capability.
 */
function pushOptions(raw: Buffer, req: IncomingMessage): string[] {
  let body = raw;
  try {
    if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(raw);
  } catch {
    return [];
  }
  const lines: (string | null)[] = [];
  let at = 0;
  let flushes = 0;
  while (at + 4 <= body.length && flushes < 2) {
    const size = Number.parseInt(body.subarray(at, at + 4).toString('latin1'), 16);
    if (Number.isNaN(size)) break;
    if (size === 0) {
      lines.push(null);
      flushes++;
      at += 4;
      continue;
    }
    lines.push(
      body
        .subarray(at + 4, at + size)
        .toString('utf8')
        .replace(/\n$/, ''),
    );
    at += size;
  }
  const caps = (lines[0] ?? '').split('\0')[1]?.split(' ') ?? [];
  if (!caps.includes('push-options')) return [];
  const flush = lines.indexOf(null);
  const end = lines.indexOf(null, flush + 1);
  return lines.slice(flush + 1, end < 0 ? undefined : end).filter((l): l is string => l !== null);
}
