import { type RunningServer, startServerProcess } from '../../support/process.ts';

/** The organization and token every faults server creates at start (MAINLINE_BOOTSTRAP_*). */
export const ORG = 'acme';
export const TOKEN = 'faults-suite-bootstrap-token-0001';

/** What every server of the suite runs with: a bootstrap token, no rate limit, no periodic jobs it does not need. */
export function serverEnv(extra: Record<string, string>): Record<string, string> {
  return {
    MAINLINE_BOOTSTRAP_ORG: ORG,
    MAINLINE_BOOTSTRAP_TOKEN: TOKEN,
    MAINLINE_RATE_LIMIT: '0',
    MAINLINE_HEALTH_SWEEP_SECONDS: '0',
    MAINLINE_WEBHOOK_POLL_MS: '0',
    MAINLINE_QUEUE_POLL_MS: '0',
    MAINLINE_SHUTDOWN_TIMEOUT: '2',
    ...extra,
  };
}

/**
 * One `mainline serve` process (bin/mainline.mjs) on a free loopback port, which can be SIGKILLed and
 * started again on the same database: each start is a new process on a new port.
 */
export class ServerProcess {
  readonly name: string;
  readonly env: Record<string, string>;
  #current: RunningServer | undefined;
  /** How many times this server was started. */
  starts = 0;

  constructor(name: string, env: Record<string, string>) {
    this.name = name;
    this.env = env;
  }

  static async start(name: string, env: Record<string, string>): Promise<ServerProcess> {
    const server = new ServerProcess(name, env);
    await server.start();
    return server;
  }

  get url(): string {
    if (this.#current === undefined) throw new Error(`${this.name} is not running`);
    return this.#current.url;
  }

  get running(): boolean {
    return this.#current !== undefined;
  }

  get logs(): readonly string[] {
    return this.#current?.logs ?? [];
  }

  async start(): Promise<void> {
    if (this.#current !== undefined) throw new Error(`${this.name} is already running`);
    this.#current = await startServerProcess(this.env);
    this.starts++;
  }

  /** SIGKILL: no shutdown hook runs, no lease is released, in-flight requests die with their sockets. */
  async kill(): Promise<void> {
    const current = this.#current;
    if (current === undefined) return;
    this.#current = undefined;
    await current.stop('SIGKILL');
  }

  /** SIGTERM, the orderly stop; resolves with the exit code. */
  async stop(): Promise<number | null> {
    const current = this.#current;
    if (current === undefined) return 0;
    this.#current = undefined;
    return current.stop('SIGTERM');
  }

  /** Kills and starts again on the same database and git root. */
  async restart(): Promise<void> {
    await this.kill();
    await this.start();
  }

  /** A JSON POST to this server with the suite's token. */
  post(path: string, body: unknown): Promise<ApiResponse> {
    return post(this.url, path, body);
  }
}

export interface ApiResponse {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: API answers are checked field by field in the tests
  readonly json: any;
  readonly text: string;
}

/** A JSON POST with the suite's token; network errors reject (e.g. the server was killed). */
export async function post(baseUrl: string, path: string, body: unknown): Promise<ApiResponse> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': TOKEN },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

/** POST that must answer 200; the error names the call and the answer. */
export async function post200(baseUrl: string, path: string, body: unknown): Promise<ApiResponse> {
  const res = await post(baseUrl, path, body);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${res.text}`);
  return res;
}

/**
 * Polls `probe` every `intervalMs` until it returns something other than undefined, null or false, and returns it.
 * Throws after `timeoutMs`, naming what was awaited and the last value or error seen.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  options: { timeoutMs: number; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${what} (last: ${detail})`);
    }
    await delay(options.intervalMs ?? 50);
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A random whole number in [min, max]. */
export function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}
