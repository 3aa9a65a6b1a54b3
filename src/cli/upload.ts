import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import {
  type CiContext,
  detectCi,
  type Env,
  type GitRunner,
  parseGitRemote,
  type RepoRef,
} from '../domain/ci-env.ts';
import { CliError, postUpload, type UploadFile, type UploadMeta, type UploadResponse } from './client.ts';
import { expandGlobs } from './globs.ts';
import { formatSummary } from './upload-summary.ts';

export interface Out {
  log: (s: string) => void;
  err: (s: string) => void;
}

/** What a client command may read from the world; tests build their own. */
export interface ClientContext {
  readonly env: Env;
  readonly cwd: string;
  readonly out: Out;
  readonly git: GitRunner;
  readonly readFile: (file: string) => string | undefined;
}

/** The real environment, read once when a client command starts. */
export function clientContext(out: Out): ClientContext {
  const cwd = process.cwd();
  return {
    env: { ...process.env },
    cwd,
    out,
    git: (args) => {
      try {
        const stdout = execFileSync('git', args, {
          cwd,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        return stdout.trim() || undefined;
      } catch {
        return undefined;
      }
    },
    readFile: (file) => {
      try {
        return fs.readFileSync(file, 'utf8');
      } catch {
        return undefined;
      }
    },
  };
}

export const DEFAULT_URL = 'http://127.0.0.1:8080';
const GZIP_ABOVE_BYTES = 1024 * 1024;
const CODEOWNERS_PLACES = ['.github/CODEOWNERS', 'CODEOWNERS', 'docs/CODEOWNERS', '.gitlab/CODEOWNERS'];

const OPTIONS = {
  junit: { type: 'string', multiple: true },
  repo: { type: 'string' },
  branch: { type: 'string' },
  sha: { type: 'string' },
  pr: { type: 'string' },
  variant: { type: 'string' },
  'job-name': { type: 'string' },
  'job-url': { type: 'string' },
  org: { type: 'string' },
  codeowners: { type: 'string' },
  'upload-key': { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export type UploadFlags = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

/** Parses the upload flags; a command line that cannot be understood is a usage error (exit 2). */
export function parseUploadFlags(args: readonly string[], command: string): UploadFlags {
  let values: UploadFlags;
  try {
    values = parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new CliError(`${command}: ${(error as Error).message}`, 2, true);
  }
  if (values.junit === undefined || values.junit.length === 0) {
    throw new CliError(`${command} needs --junit <glob> (for example --junit 'reports/**/*.xml')`, 2, true);
  }
  if (values.pr !== undefined && !/^[1-9]\d*$/.test(values.pr)) {
    throw new CliError(`--pr must be a pull-request number, got "${values.pr}"`, 2);
  }
  return values;
}

/** `host/owner/name`, `owner/name` (on github.com), or a git remote URL. */
function parseRepoFlag(value: string): RepoRef {
  const fromUrl = /[@:]/.test(value) ? parseGitRemote(value) : undefined;
  const parts = value.split('/').filter((p) => p !== '');
  const name = parts.at(-1);
  const repo =
    fromUrl ??
    (parts.length === 2 && name !== undefined
      ? { host: 'github.com', owner: parts[0] as string, name }
      : parts.length >= 3 && name !== undefined
        ? { host: (parts[0] as string).toLowerCase(), owner: parts.slice(1, -1).join('/'), name }
        : undefined);
  if (repo === undefined)
    throw new CliError(`--repo must be host/owner/name or owner/name, got "${value}"`, 2);
  return repo;
}

export interface UploadPlan {
  readonly url: string;
  readonly token: string;
  readonly meta: UploadMeta;
  readonly patterns: readonly string[];
  readonly json: boolean;
  readonly ci: CiContext;
}

function required<T>(value: T | undefined, message: string): T {
  if (value === undefined || value === '') throw new CliError(message, 2);
  return value;
}

function readCodeowners(flags: UploadFlags, ctx: ClientContext): string | undefined {
  if (flags.codeowners !== undefined) {
    const text = ctx.readFile(path.resolve(ctx.cwd, flags.codeowners));
    return required(text, `cannot read the CODEOWNERS file ${flags.codeowners}`);
  }
  const root = ctx.git(['rev-parse', '--show-toplevel']) ?? ctx.cwd;
  for (const place of CODEOWNERS_PLACES) {
    const text = ctx.readFile(path.join(root, place));
    if (text !== undefined) return text;
  }
  return undefined;
}

function serverUrl(flags: UploadFlags, env: Env): string {
  const url = (flags.url ?? env['MAINLINE_URL']?.trim()) || DEFAULT_URL;
  if (!/^https?:\/\/[^/]+/.test(url))
    throw new CliError(`--url must be an http:// or https:// URL, got "${url}"`, 2);
  return url.replace(/\/+$/, '');
}

function buildMeta(flags: UploadFlags, ci: CiContext, org: string, ctx: ClientContext): UploadMeta {
  const why =
    ci.provider === 'local' ? 'no CI detected and git could not tell' : `${ci.provider} did not say`;
  const meta: UploadMeta = {
    repo: required(
      flags.repo === undefined ? ci.repo : parseRepoFlag(flags.repo),
      `which repository? ${why}: pass --repo host/owner/name`,
    ),
    org_url_slug: org,
    branch: required(flags.branch ?? ci.branch, `which branch? ${why}: pass --branch`),
    commit_sha: required(flags.sha ?? ci.commitSha, `which commit? ${why}: pass --sha`),
    pr_number: flags.pr === undefined ? ci.prNumber : Number(flags.pr),
    pr_title: ci.prTitle,
    job_name: flags['job-name'] ?? ci.jobName,
    job_url: flags['job-url'] ?? ci.jobUrl,
    variant: flags.variant,
    run_attempt: ci.runAttempt,
    codeowners: readCodeowners(flags, ctx),
    upload_key: flags['upload-key'],
  };
  for (const key of Object.keys(meta) as (keyof UploadMeta)[]) {
    if (meta[key] === undefined) delete meta[key];
  }
  return meta;
}

/** Everything an upload needs, from flags over CI detection over git; throws CliError (exit 2). */
export function planUpload(flags: UploadFlags, ctx: ClientContext): UploadPlan {
  const token = required(
    flags.token ?? ctx.env['MAINLINE_TOKEN']?.trim(),
    'no API token: pass --token or set MAINLINE_TOKEN',
  );
  const org = required(
    flags.org ?? ctx.env['MAINLINE_ORG']?.trim(),
    'no organization: pass --org <slug> or set MAINLINE_ORG',
  );
  const ci = detectCi(ctx.env, { git: ctx.git, readFile: ctx.readFile });
  return {
    url: serverUrl(flags, ctx.env),
    token,
    meta: buildMeta(flags, ci, org, ctx),
    patterns: flags.junit ?? [],
    json: flags.json === true,
    ci,
  };
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function prepareFile(file: string, cwd: string): UploadFile & { original: number } {
  const bytes = fs.readFileSync(file);
  const gzipped = bytes[0] === 0x1f && bytes[1] === 0x8b;
  const body = !gzipped && bytes.length > GZIP_ABOVE_BYTES ? gzipSync(bytes) : bytes;
  return { name: path.relative(cwd, file).split(path.sep).join('/'), body, original: bytes.length };
}

/**
 * The JUnit files the patterns match, ready to send (over 1 MB gzipped). With `since`, files last
 * written before that time are left out (stale reports of an earlier run). Empty when none match.
 */
export function collectFiles(plan: UploadPlan, ctx: ClientContext, since?: number): UploadFile[] {
  const patterns = plan.patterns;
  const { files, unmatched } = expandGlobs(patterns, ctx.cwd);
  const fresh = since === undefined ? files : files.filter((f) => fs.statSync(f).mtimeMs >= since - 2000);
  if (fresh.length < files.length) {
    ctx.out.err(`mainline: leaving out ${files.length - fresh.length} JUnit file(s) not written by this run`);
  }
  if (fresh.length > 0 && unmatched.length > 0) {
    ctx.out.err(`mainline: no files matched ${unmatched.map((p) => `"${p}"`).join(', ')}`);
  }
  const prepared = fresh.map((f) => prepareFile(f, ctx.cwd));
  if (prepared.length > 0) {
    const original = prepared.reduce((n, f) => n + f.original, 0);
    const sent = prepared.reduce((n, f) => n + f.body.length, 0);
    const compressed = sent === original ? '' : `, ${size(sent)} compressed`;
    ctx.out.err(
      `mainline: uploading ${prepared.length} JUnit file(s) (${size(original)}${compressed}) to ${plan.url}`,
    );
  }
  return prepared;
}

export function noFilesMessage(patterns: readonly string[]): string {
  return `no JUnit files matched ${patterns.map((p) => `"${p}"`).join(', ')}`;
}

/** Sends the files and prints the result (the summary, or the server's JSON with --json). */
export async function sendAndReport(
  plan: UploadPlan,
  files: readonly UploadFile[],
  print: (s: string) => void,
  warn: (s: string) => void = () => {},
): Promise<UploadResponse> {
  const response = await postUpload(plan.url, plan.token, plan.meta, files, {
    onRetry: (message) => warn(`mainline: ${message}`),
  });
  print(plan.json ? JSON.stringify(response) : formatSummary(response, plan.url));
  return response;
}

/** `mainline upload`: send JUnit files with the CI context; exits 0 once the server accepted them. */
export async function upload(args: readonly string[], ctx: ClientContext): Promise<number> {
  const plan = planUpload(parseUploadFlags(args, 'upload'), ctx);
  const files = collectFiles(plan, ctx);
  if (files.length === 0) throw new CliError(noFilesMessage(plan.patterns));
  await sendAndReport(plan, files, ctx.out.log, ctx.out.err);
  return 0;
}
