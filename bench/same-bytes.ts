// The second baseline of every read (issue 25): the real server's answers are captured once, then a
// bare Fastify route (bench/baseline-server.ts) serves the same response bytes from memory and is
// measured with the same tools, connections and request bodies. Its figures are the limit for a
// read: HTTP, parsing the request and writing the bytes, nothing else.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { log } from './common.ts';
import { type LoadOptions, type LoadResult, measure, type Scenario } from './load.ts';
import { startBaseline } from './server.ts';

export interface CapturedAnswer {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body: string;
  readonly status: number;
  readonly contentType: string;
  readonly base64: string;
}

export const answerKey = (method: string, p: string, body: string) => `${method} ${p}\n${body}`;

/** One request, its answer's bytes and content type. */
async function fetchAnswer(base: string, s: Scenario, body: string): Promise<CapturedAnswer> {
  const method = s.method ?? 'POST';
  const res = await fetch(base + s.path, {
    method,
    headers: s.headers,
    ...(method === 'GET' ? {} : { body }),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return {
    method,
    path: s.path,
    body: method === 'GET' ? '' : body,
    status: res.status,
    contentType: res.headers.get('content-type') ?? 'application/json; charset=utf-8',
    base64: bytes.toString('base64'),
  };
}

/** The real server's answer to every body of every scenario (a GET: its one answer). */
export async function captureAnswers(
  base: string,
  scenarios: readonly Scenario[],
): Promise<CapturedAnswer[]> {
  const out: CapturedAnswer[] = [];
  for (const s of scenarios) {
    const bodies = (s.method ?? 'POST') === 'GET' || s.bodies.length === 0 ? [''] : s.bodies;
    for (const body of bodies) out.push(await fetchAnswer(base, s, body));
  }
  return out;
}

/** Mean answer size of a scenario's captured answers, in bytes. */
export function meanBytes(answers: readonly CapturedAnswer[], s: Scenario): number {
  const mine = answers.filter(
    (a) => a.path === s.path && (s.bodies.length === 0 || s.bodies.includes(a.body)),
  );
  if (mine.length === 0) return Number.NaN;
  return mine.reduce((n, a) => n + Buffer.byteLength(a.base64, 'base64'), 0) / mine.length;
}

/**
 * Every scenario measured against the bare route serving its captured bytes; results by scenario
 * name (the names are the real rows').
 */
export async function measureSameBytes(
  answers: readonly CapturedAnswer[],
  scenarios: readonly Scenario[],
  options: LoadOptions,
  what: string,
): Promise<Map<string, LoadResult>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-bench-answers-'));
  const file = path.join(dir, 'answers.json');
  fs.writeFileSync(file, JSON.stringify(answers));
  const server = await startBaseline({ BENCH_ANSWERS: file });
  const out = new Map<string, LoadResult>();
  try {
    for (const s of scenarios) {
      log(`${what}: same bytes from memory: ${s.name}`);
      out.set(s.name, await measure(server.url, s, options));
    }
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
