// Which of the two layouts an internal.bin file has (a TestReport or a bare TestResult), judged from
// its first bytes before the streamed decoding in decode.ts starts.
import { isValidMessage } from '../../lib/protobuf-stream.ts';
import { RESULT_SHAPE, RUN_SHAPE } from './schema.ts';

/** A TestReport (results of runs), or a bare TestResult (runs), as early rspec plugins wrote. */
export type Layout = 'report' | 'result';

/**
 * The layout of a file from its first bytes, as the CLI's reader decides (a TestReport when the bytes
 * are one, else a TestResult), judged on the first top-level field 1 — a TestReport's first result,
 * or a TestResult's first run — by its first field: a TestReport's when that is valid as a result's
 * field (a run, metadata), else a TestResult's when the whole element is a valid run. Only what one
 * run may take is looked at. Undefined while more bytes are needed; 'report' when the element is
 * larger than a run may be, or neither (the reading then says what is wrong).
 */
export function detectLayout(bytes: Uint8Array, maxRunBytes: number): Layout | undefined {
  if (bytes.length > maxRunBytes + 1024) return 'report';
  let at = 0;
  const varint = (): number | undefined => {
    let value = 0;
    let scale = 1;
    for (let k = 0; k < 10; k++) {
      const byte = bytes[at++];
      if (byte === undefined) return undefined;
      value += (byte & 0x7f) * scale;
      scale *= 128;
      if ((byte & 0x80) === 0) return value;
    }
    return Number.NaN;
  };
  /** Skips one field after its tag; false when its bytes are not all here yet. */
  const skip = (wireType: number): boolean | 'bad' => {
    if (wireType === 0) {
      const value = varint();
      return value === undefined ? false : Number.isNaN(value) ? 'bad' : true;
    }
    if (wireType === 1 || wireType === 5) {
      at += wireType === 1 ? 8 : 4;
      return at <= bytes.length;
    }
    if (wireType !== 2) return 'bad';
    const length = varint();
    if (length === undefined) return false;
    if (Number.isNaN(length)) return 'bad';
    at += length;
    return at <= bytes.length;
  };
  for (;;) {
    const tag = varint();
    if (tag === undefined) return undefined;
    if (Number.isNaN(tag)) return 'report';
    if (Math.floor(tag / 8) !== 1 || tag % 8 !== 2) {
      const skipped = skip(tag % 8);
      if (skipped === 'bad') return 'report';
      if (!skipped) return undefined;
      continue;
    }
    const length = varint();
    if (length === undefined) return undefined;
    if (Number.isNaN(length) || length > maxRunBytes || length === 0) return 'report';
    const start = at;
    const end = start + length;
    // Its first field, whole: valid as a TestResult's field (a run, metadata)?
    const first = varint();
    if (first === undefined) return undefined;
    if (Number.isNaN(first)) return 'report';
    const skipped = skip(first % 8);
    if (skipped !== 'bad' && !skipped && at <= end) return undefined;
    if (skipped === true && at <= end && isValidMessage(bytes.subarray(start, at), RESULT_SHAPE))
      return 'report';
    // Else the element itself must be a run.
    if (end > bytes.length) return undefined;
    return isValidMessage(bytes.subarray(start, end), RUN_SHAPE) ? 'result' : 'report';
  }
}
