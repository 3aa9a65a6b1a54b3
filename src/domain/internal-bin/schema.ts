/**
 * The part of trunk-analytics-cli's `internal.bin` (a protobuf `TestReport`) that Mainline reads,
 * written here as a protobufjs reflection definition. Field numbers and wire types are those of the
 * CLI's message definitions (trunk-io/analytics-cli proto/proto/test_context.proto, read at commit
 * fcbc1bd2a5f8d730f453f60e4b0b117fd12f93f8); names and the selection of fields are ours. Fields not
 * listed (system output, code owners, Bazel run information, uploader metadata, …) are skipped by the
 * decoder without being decoded.
 *
 * Layout: TestReport { repeated TestResult results = 1 } → TestResult { repeated TestCaseRun runs = 1 }.
 * The two outer levels are walked by lib/protobuf-stream.ts; only TestCaseRun is decoded here.
 */
import protobuf from 'protobufjs/light.js';
import type { WireShape } from '../../lib/protobuf-stream.ts';

/** TestCaseRun.status values. */
export const RUN_STATUS = { UNSPECIFIED: 0, SUCCESS: 1, FAILURE: 2, SKIPPED: 3 } as const;

/** Field numbers from a TestReport down to its runs (TestReport.test_results, TestResult.test_case_runs). */
export const REPORT_RUNS_PATH: readonly number[] = [1, 1];
/** The same from a bare TestResult, which early rspec plugins wrote (and the CLI still reads). */
export const RESULT_RUNS_PATH: readonly number[] = [1];

// Wire shapes of every field of the CLI's messages (all of them, unlike the decoder's schema): for
// telling a TestReport from a bare TestResult as the CLI's own reader does (context/src/junit/
// parser.rs bin_parse: a TestReport if the bytes decode as one, else a TestResult).
const TIMESTAMP: WireShape = { 1: 'varint', 2: 'varint' };
const NUMBER: WireShape = { 1: 'varint' };
const UPLOADER_METADATA: WireShape = { 1: 'string', 2: 'string', 3: TIMESTAMP, 4: 'string' };
/** TestCaseRun. */
export const RUN_SHAPE: WireShape = {
  1: 'string',
  2: 'string',
  3: 'string',
  4: 'string',
  5: 'string',
  6: 'varint',
  7: 'varint',
  8: 'varint',
  9: TIMESTAMP,
  10: TIMESTAMP,
  11: 'string',
  12: 'varint',
  13: { 1: 'string' },
  14: NUMBER,
  15: NUMBER,
  16: { 1: 'string', 2: 'string', 3: 'string', 4: 'string' },
  17: { 1: 'string', 2: 'varint', 3: TIMESTAMP, 4: TIMESTAMP },
};
/** TestResult. */
export const RESULT_SHAPE: WireShape = {
  1: RUN_SHAPE,
  2: UPLOADER_METADATA,
  3: { 1: 'string', 2: 'varint', 3: NUMBER },
};

const definition: protobuf.INamespace = {
  nested: {
    Timestamp: {
      fields: {
        seconds: { type: 'int64', id: 1 },
        nanos: { type: 'int32', id: 2 },
      },
    },
    Number: { fields: { number: { type: 'int32', id: 1 } } },
    Output: {
      fields: {
        /** The full text (the JUnit failure body; a backtrace from rspec). */
        text: { type: 'string', id: 1 },
        /** The short message. */
        message: { type: 'string', id: 2 },
      },
    },
    Run: {
      fields: {
        id: { type: 'string', id: 1 },
        name: { type: 'string', id: 2 },
        classname: { type: 'string', id: 3 },
        file: { type: 'string', id: 4 },
        parentName: { type: 'string', id: 5 },
        /** Deprecated upstream in favour of lineNumber. */
        line: { type: 'int32', id: 6 },
        status: { type: 'int32', id: 7 },
        startedAt: { type: 'Timestamp', id: 9 },
        finishedAt: { type: 'Timestamp', id: 10 },
        /** Deprecated upstream in favour of output. */
        statusOutputMessage: { type: 'string', id: 11 },
        isQuarantined: { type: 'bool', id: 12 },
        /** 0-based; set by the rspec plugin, or from a JUnit `attempt_number` attribute. */
        attemptIndex: { type: 'Number', id: 14 },
        lineNumber: { type: 'Number', id: 15 },
        output: { type: 'Output', id: 16 },
      },
    },
    /** TestResult: its runs. */
    Result: { fields: { runs: { rule: 'repeated', type: 'Run', id: 1 } } },
    /** TestReport: its results. */
    Report: { fields: { results: { rule: 'repeated', type: 'Result', id: 1 } } },
  },
};

const root = protobuf.Root.fromJSON(definition);

/** TestCaseRun, as far as it is read. */
export const RunType = root.lookupType('Run');

export interface WireTimestamp {
  readonly seconds: number | protobuf.Long;
  readonly nanos: number;
}

/** A decoded TestCaseRun: absent strings are '', absent numbers 0, absent messages null. */
export interface WireRun {
  readonly id: string;
  readonly name: string;
  readonly classname: string;
  readonly file: string;
  readonly parentName: string;
  readonly line: number;
  readonly status: number;
  readonly startedAt: WireTimestamp | null;
  readonly finishedAt: WireTimestamp | null;
  readonly statusOutputMessage: string;
  readonly isQuarantined: boolean;
  readonly attemptIndex: { readonly number: number } | null;
  readonly lineNumber: { readonly number: number } | null;
  readonly output: { readonly text: string; readonly message: string } | null;
}

/** Decodes one TestCaseRun's bytes; throws on malformed data. */
export function decodeRun(bytes: Uint8Array): WireRun {
  // A Buffer view (no copy): protobufjs then decodes strings natively rather than in JavaScript.
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return RunType.decode(view) as unknown as WireRun;
}

/** A run to encode: any subset of the fields, Timestamp seconds as numbers. */
export type RunInput = { [K in keyof WireRun]?: unknown };

/**
 * Encodes a TestReport of these results' runs with the same schema (for tests and the benchmark; the
 * server only decodes).
 */
export function encodeReport(results: readonly (readonly RunInput[])[]): Uint8Array {
  const Report = root.lookupType('Report');
  return Report.encode(Report.fromObject({ results: results.map((runs) => ({ runs })) })).finish();
}

/** A bare TestResult of these runs, as early rspec plugins wrote internal.bin (for tests). */
export function encodeResult(runs: readonly RunInput[]): Uint8Array {
  const Result = root.lookupType('Result');
  return Result.encode(Result.fromObject({ runs })).finish();
}
