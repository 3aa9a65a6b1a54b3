/** The demo's HTTP client: it talks to the server only through its public API, as a user's scripts would. */

const TIMEOUT_MS = 15_000;

/** A non-2xx answer, with the error envelope's code and message. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export class DemoApi {
  constructor(
    readonly baseUrl: string,
    readonly token: string,
  ) {}

  /** POSTs JSON to `/v1/<endpoint>` and resolves with the JSON answer; throws ApiError on an error status. */
  async post<T>(endpoint: string, body: unknown): Promise<T> {
    const url = `${this.baseUrl}/v1/${endpoint}`;
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': this.token },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await response.text();
    if (!response.ok) {
      let code: string | undefined;
      let message = text.slice(0, 300);
      try {
        const error = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
        code = error?.code;
        message = error?.message ?? message;
      } catch {
        // not the error envelope: keep the text
      }
      throw new ApiError(
        `POST /v1/${endpoint} answered ${response.status}${code ? ` ${code}` : ''}: ${message}`,
        response.status,
        code,
      );
    }
    return JSON.parse(text) as T;
  }
}
