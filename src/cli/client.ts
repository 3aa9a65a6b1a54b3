/** The HTTP client of the client commands: posts test results to a Mainline (or Trunk v1) server. */
import { createHash } from 'node:crypto';
import type { UploadMeta } from '../app/ingest/prepare/types.ts';

/** The upload's `meta` part: one definition, shared with the server (docs/upload-contract.md). */
export type { UploadMeta };

/** A failure the client commands report as `mainline: <message>` and exit with `exitCode`. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
    /** True when the usage text helps (a command line that cannot be understood). */
    readonly showUsage = false,
  ) {
    super(message);
  }
}

export interface UploadFile {
  /** The name the server reports problems under: the path relative to the working directory. */
  readonly name: string;
  /** The bytes to send, gzip-compressed or not. */
  readonly body: Uint8Array;
}

export interface FileCounts {
  test_cases: number;
  attempts: number;
  failures: number;
  retries: number;
  skipped: number;
}

export interface FileReport {
  name: string;
  ok: boolean;
  counts: FileCounts;
  problems: { severity: string; message: string; line?: number; column?: number }[];
}

export interface FailedTest {
  test_case_id: string;
  name: string;
  parent?: string | null;
  classname?: string | null;
  file?: string | null;
  quarantined: boolean;
}

export interface UploadResponse {
  upload_id: string;
  duplicate: boolean;
  repo: { host: string; owner: string; name: string };
  counts: FileCounts & { files: number };
  files: FileReport[];
  failed_tests: FailedTest[];
  failed_tests_truncated: boolean;
  all_failures_quarantined: boolean;
}

const TIMEOUT_MS = 5 * 60_000;

interface ErrorBody {
  code?: string;
  message?: string;
  details?: { path?: string; message?: string }[];
}

const HINTS: Record<number, string> = {
  401: 'check --token or MAINLINE_TOKEN',
  404: 'check --org (or MAINLINE_ORG) and --url',
  413: 'the server refused the upload as too large (its MAINLINE_BODY_LIMIT); upload fewer files at a time',
};

/** The message for a non-2xx answer: status, the envelope's code and message, then each detail. */
function describeErrorResponse(status: number, text: string, url: string): string {
  let error: ErrorBody | undefined;
  try {
    // Mainline's envelope is {"error": {...}}; a proxy or another server may answer {"message"}.
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    error = typeof parsed.error === 'object' ? (parsed.error as ErrorBody) : (parsed as ErrorBody);
    if (typeof error.message !== 'string') error = undefined;
  } catch {
    error = undefined;
  }
  if (error?.code === 'ROUTE_NOT_FOUND') {
    return `${url} does not accept test-results uploads (404 ROUTE_NOT_FOUND); is it a Mainline server, and recent enough?`;
  }
  const head = `the server answered ${status}${error?.code ? ` ${error.code}` : ''}: ${
    error?.message ?? (text.trim().slice(0, 300) || 'no message')
  }`;
  const details = (error?.details ?? []).map((d) => `\n  ${d.path ?? '$'}: ${d.message ?? ''}`).join('');
  const hint = HINTS[status] === undefined ? '' : `\n(${HINTS[status]})`;
  return head + details + hint;
}

function describeNetworkError(error: unknown, url: string): string {
  const e = error as { name?: string; cause?: { code?: string; message?: string }; message?: string };
  if (e.name === 'TimeoutError') return `no answer from ${url} within ${TIMEOUT_MS / 1000} seconds`;
  const reason = e.cause?.code ?? e.cause?.message ?? e.message ?? String(error);
  return `cannot reach the server at ${url} (${reason}); check --url or MAINLINE_URL`;
}

function buildForm(meta: UploadMeta, files: readonly UploadFile[]): FormData {
  const form = new FormData();
  form.append('meta', JSON.stringify(meta));
  for (const file of files) {
    form.append('junit', new Blob([file.body], { type: 'application/octet-stream' }), file.name);
  }
  return form;
}

/**
 * The upload's idempotency key when the user gave none: a digest of its meta and files, so sending the
 * same reports again (a retry after a lost answer, a re-run of the same step) is answered with the
 * first upload's result instead of being stored twice. Different reports get different keys.
 */
export function contentUploadKey(meta: UploadMeta, files: readonly UploadFile[]): string {
  const hash = createHash('sha256');
  const { upload_key: _ignored, ...rest } = meta;
  hash.update(JSON.stringify(rest));
  for (const f of files) {
    hash.update('\u0000');
    hash.update(f.name);
    hash.update('\u0000');
    hash.update(f.body);
  }
  return `auto-${hash.digest('hex').slice(0, 40)}`;
}

/** A failure worth trying again: the server could not be reached, or answered 429 or 5xx. */
class TransientUploadError extends CliError {
  constructor(
    message: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message);
  }
}

async function postOnce(
  baseUrl: string,
  token: string,
  meta: UploadMeta,
  files: readonly UploadFile[],
): Promise<UploadResponse> {
  const url = `${baseUrl.replace(/\/+$/, '')}/v1/test-results/upload`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'x-api-token': token, accept: 'application/json' },
      body: buildForm(meta, files),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new TransientUploadError(describeNetworkError(error, baseUrl), undefined);
  }
  const text = await response.text();
  if (response.status === 429 || response.status >= 500) {
    const seconds = Number(response.headers.get('retry-after'));
    const wait = Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 30) * 1000 : undefined;
    throw new TransientUploadError(describeErrorResponse(response.status, text, baseUrl), wait);
  }
  if (!response.ok) throw new CliError(describeErrorResponse(response.status, text, baseUrl));
  try {
    return JSON.parse(text) as UploadResponse;
  } catch {
    throw new CliError(`the server at ${baseUrl} answered ${response.status} with a body that is not JSON`);
  }
}

/**
 * Posts the reports. Without an upload_key it sends a content-derived one (contentUploadKey), which
 * makes retrying safe: an unreachable server, a 429 or a 5xx is retried (`retries` times, waiting
 * `retryDelayMs` doubled each time, or the server's Retry-After), then reported.
 */
export async function postUpload(
  baseUrl: string,
  token: string,
  meta: UploadMeta,
  files: readonly UploadFile[],
  options: { retries?: number; retryDelayMs?: number; onRetry?: (message: string) => void } = {},
): Promise<UploadResponse> {
  const keyed = meta.upload_key === undefined ? { ...meta, upload_key: contentUploadKey(meta, files) } : meta;
  const retries = options.retries ?? 2;
  for (let attempt = 0; ; attempt++) {
    try {
      return await postOnce(baseUrl, token, keyed, files);
    } catch (error) {
      if (!(error instanceof TransientUploadError) || attempt >= retries) throw error;
      const wait = error.retryAfterMs ?? (options.retryDelayMs ?? 1000) * 2 ** attempt;
      options.onRetry?.(`${error.message}; retrying in ${Math.round(wait / 100) / 10} s`);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
