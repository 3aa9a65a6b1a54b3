/**
 * The closed catalogue of error codes the API answers with. Each code has one HTTP status;
 * every error body is `{ "error": { "code", "message", "details"? } }`.
 */
export const ERROR_STATUS = {
  /** A request field is missing or has the wrong type, value or format. */
  VALIDATION_FAILED: 400,
  /** The body is not parseable JSON. */
  INVALID_JSON: 400,
  /** A page_token that this server did not issue for this query. */
  INVALID_PAGE_TOKEN: 400,
  /** The request is well formed but cannot be done in the resource's current state. */
  BAD_REQUEST: 400,
  /** No x-api-token header. */
  AUTHENTICATION_REQUIRED: 401,
  /** The x-api-token is unknown or revoked. */
  INVALID_TOKEN: 401,
  /** A GitHub webhook delivery without a valid X-Hub-Signature-256; nothing was processed. */
  INVALID_SIGNATURE: 401,
  /** The credentials are valid but not for this operation. */
  FORBIDDEN: 403,
  /** No such route. */
  ROUTE_NOT_FOUND: 404,
  /** org_url_slug is not the token's organization. */
  ORG_NOT_FOUND: 404,
  /** The repository is not known to the token's organization. */
  REPO_NOT_FOUND: 404,
  /** No test case with that id in the repository. */
  TEST_NOT_FOUND: 404,
  /** No merge queue for that target branch. */
  QUEUE_NOT_FOUND: 404,
  /** No such pull request in the queue. */
  PR_NOT_FOUND: 404,
  /** No such merge-queue test run. */
  TEST_RUN_NOT_FOUND: 404,
  /** No outgoing webhook with that id in the organization. */
  WEBHOOK_NOT_FOUND: 404,
  /** The method is not allowed on this route. */
  METHOD_NOT_ALLOWED: 405,
  /** The request body stopped arriving (no bytes for MAINLINE_BODY_STALL_SECONDS); nothing was stored. */
  REQUEST_TIMEOUT: 408,
  /** The resource already exists. */
  ALREADY_EXISTS: 409,
  /** The change conflicts with the resource's current state. */
  CONFLICT: 409,
  /** The body is larger than the configured limit. */
  PAYLOAD_TOO_LARGE: 413,
  /** The Content-Type is not one this endpoint accepts. */
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** The request's headers together are larger than the server reads (Node's limit, 16 KB by default). */
  REQUEST_HEADERS_TOO_LARGE: 431,
  /** Too many requests for this token, or failed authentications from this address; retry after Retry-After. */
  RATE_LIMIT_EXCEEDED: 429,
  /** Something failed inside the server; the message never carries internals. */
  INTERNAL_ERROR: 500,
  /** The server cannot serve now (shutting down, database unreachable). */
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One problem with one field of a request. */
export interface ErrorDetail {
  /** JSONPath of the field, e.g. `$.page_query.page_size`. */
  readonly path: string;
  /** What the field must be, in words. */
  readonly expected: string;
  /** The problem as one sentence naming the field. */
  readonly message: string;
}

/** An expected failure that maps to one HTTP answer. Thrown by use cases, rendered by the HTTP edge. */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: readonly ErrorDetail[] | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: readonly ErrorDetail[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers;
  }
}
