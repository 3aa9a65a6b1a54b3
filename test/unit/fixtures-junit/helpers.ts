// Shared helpers for the JUnit parser tests (not a test file itself).
import { readFileSync } from 'node:fs';
import type { JunitAttempt, JunitFileSummary, JunitParserOptions } from '../../../src/domain/junit/index.ts';
import { createJunitParser } from '../../../src/domain/junit/index.ts';

/** Copies of ../shared/fixtures/junit (real files from many producers), kept in the repo for CI. */
export const SHARED_FIXTURES = new URL('../../fixtures/junit/', import.meta.url).pathname;
export const LOCAL_FIXTURES = new URL('./', import.meta.url);

export interface ParseResult {
  attempts: JunitAttempt[];
  batches: number[];
  summary: JunitFileSummary;
}

export function readSharedFixture(name: string): string {
  return readFileSync(`${SHARED_FIXTURES}/${name}`, 'utf8');
}

export function readLocalFixture(name: string): string {
  return readFileSync(new URL(name, LOCAL_FIXTURES), 'utf8');
}

/** Feeds `chunks` one after another and collects everything the parser reports. */
export function parseChunks(
  chunks: Iterable<string | Uint8Array>,
  options: Omit<JunitParserOptions, 'onAttempts'> = {},
): ParseResult {
  const attempts: JunitAttempt[] = [];
  const batches: number[] = [];
  const parser = createJunitParser({
    ...options,
    onAttempts(batch) {
      batches.push(batch.length);
      attempts.push(...batch);
    },
  });
  for (const chunk of chunks) parser.write(chunk);
  return { attempts, batches, summary: parser.close() };
}

export function parseText(text: string, options: Omit<JunitParserOptions, 'onAttempts'> = {}): ParseResult {
  return parseChunks([text], options);
}

/** Compact `name outcome#retryIndex` strings, for asserting long attempt lists. */
export function outline(attempts: JunitAttempt[]): string[] {
  return attempts.map((a) => `${a.name} ${a.outcome}#${a.retryIndex}`);
}

export function errorsOf(summary: JunitFileSummary): string[] {
  return summary.problems.filter((p) => p.severity === 'error').map((p) => p.message);
}
