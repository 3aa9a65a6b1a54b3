/**
 * A streaming reader of the protobuf wire format for one shape of message: a root message whose
 * interesting part is a repeated message field some levels down (`path`), e.g. a report's results'
 * runs. Bytes are pushed as they arrive; each wanted message's bytes are handed over whole, one at a
 * time, and everything else is skipped without being held. Memory is bounded by `maxMessageBytes`
 * (the one message being collected) whatever the size of the input, and the input is checked as it
 * is read: a field running past the message that holds it, a length beyond its bounds, an unknown
 * wire type, a varint over 10 bytes or input ending mid-field is an error, never an exception.
 *
 * Generic: it knows field numbers and wire types only. Decoding each message is the caller's.
 */

export interface ProtoStreamOptions {
  /**
   * Field numbers from the root to the wanted messages: `[1, 1]` wants every message of field 1 of
   * every message of the root's field 1. Each step must be a length-delimited field; a field of
   * that number with another wire type is skipped.
   */
  readonly path: readonly number[];
  /** The largest wanted message accepted, in bytes; a larger one is an error. */
  readonly maxMessageBytes: number;
  /**
   * A wanted message's bytes: a view that is reused after the call returns (copy what is kept).
   * Returning a string stops the reading with that error.
   */
  readonly onMessage: (bytes: Uint8Array) => string | undefined;
}

export interface ProtoStream {
  /** The next bytes; an error message when the input is refused (later pushes do nothing). */
  push(chunk: Uint8Array): string | undefined;
  /** The input ended: an error if it ended in the middle of a field or message. */
  end(): string | undefined;
  /** Bytes read so far. */
  readonly offset: number;
}

const HEADER = 0;
const SKIP = 1;
const COLLECT = 2;
const SKIP_VARINT = 3;

/** Longest varint (a 64-bit value). */
const MAX_VARINT_BYTES = 10;
/** Lengths above this are refused outright (protobuf's own limit is 2 GiB). */
const MAX_LENGTH = 2 ** 31 - 1;

export function createProtoStream(options: ProtoStreamOptions): ProtoStream {
  return new Reader(options);
}

class Reader implements ProtoStream {
  offset = 0;
  #error: string | undefined;
  #mode = HEADER;
  /** Absolute offsets where the enclosing messages end (the root has none). */
  readonly #ends: number[] = [];
  // The varint being read in HEADER mode: a tag, then (for a length-delimited field) its length.
  #readingLength = false;
  #value = 0;
  #scale = 1;
  #varintBytes = 0;
  #field = 0;
  #skipLeft = 0;
  #buffer = new Uint8Array(0);
  #filled = 0;
  #wanted = 0;

  constructor(private readonly options: ProtoStreamOptions) {}

  push(chunk: Uint8Array): string | undefined {
    if (this.#error !== undefined) return this.#error;
    const error = this.#read(chunk);
    if (error !== undefined) this.#error = `${error} (at byte ${this.offset})`;
    return this.#error;
  }

  end(): string | undefined {
    if (this.#error !== undefined) return this.#error;
    if (this.#mode !== HEADER || this.#varintBytes > 0 || this.#readingLength) {
      this.#error = `the data ends in the middle of a field (at byte ${this.offset})`;
      return this.#error;
    }
    this.#closeEnded();
    if (this.#ends.length > 0) {
      this.#error = `the data ends in the middle of a message (at byte ${this.offset})`;
      return this.#error;
    }
    return undefined;
  }

  /** Leaves the enclosing messages that end here. */
  #closeEnded(): string | undefined {
    const ends = this.#ends;
    while (ends.length > 0 && ends[ends.length - 1] === this.offset) ends.pop();
    const end = ends[ends.length - 1];
    if (end !== undefined && this.offset > end) return 'a field runs past the end of the message holding it';
    return undefined;
  }

  #read(chunk: Uint8Array): string | undefined {
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (this.#mode === SKIP) {
        const take = Math.min(this.#skipLeft, n - i);
        i += take;
        this.offset += take;
        this.#skipLeft -= take;
        if (this.#skipLeft === 0) this.#mode = HEADER;
      } else if (this.#mode === COLLECT) {
        const take = Math.min(this.#wanted - this.#filled, n - i);
        this.#buffer.set(chunk.subarray(i, i + take), this.#filled);
        this.#filled += take;
        i += take;
        this.offset += take;
        if (this.#filled === this.#wanted) {
          this.#mode = HEADER;
          const refused = this.options.onMessage(this.#buffer.subarray(0, this.#wanted));
          if (refused !== undefined) return refused;
        }
      } else if (this.#mode === SKIP_VARINT) {
        const byte = chunk[i++] as number;
        this.offset++;
        if ((byte & 0x80) === 0) {
          this.#mode = HEADER;
          this.#varintBytes = 0;
        } else if (++this.#varintBytes >= MAX_VARINT_BYTES) return 'a varint is longer than 10 bytes';
      } else {
        if (!this.#readingLength && this.#varintBytes === 0) {
          const closed = this.#closeEnded();
          if (closed !== undefined) return closed;
        }
        const byte = chunk[i++] as number;
        this.offset++;
        this.#value += (byte & 0x7f) * this.#scale;
        this.#scale *= 128;
        this.#varintBytes++;
        if ((byte & 0x80) !== 0) {
          if (this.#varintBytes >= (this.#readingLength ? MAX_VARINT_BYTES : 5))
            return this.#readingLength
              ? 'a length is longer than 10 bytes'
              : 'a field tag is longer than 5 bytes';
          continue;
        }
        const value = this.#value;
        this.#value = 0;
        this.#scale = 1;
        this.#varintBytes = 0;
        const refused = this.#readingLength ? this.#length(value) : this.#tag(value);
        if (refused !== undefined) return refused;
      }
    }
    return undefined;
  }

  #tag(tag: number): string | undefined {
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (field === 0) return 'a field has number 0';
    this.#field = field;
    switch (wireType) {
      case 0:
        this.#mode = SKIP_VARINT;
        return undefined;
      case 1:
        return this.#skip(8);
      case 2:
        this.#readingLength = true;
        return undefined;
      case 5:
        return this.#skip(4);
      default:
        return `field ${field} has wire type ${wireType}, which is not read (groups are obsolete)`;
    }
  }

  #skip(bytes: number): string | undefined {
    const end = this.#ends[this.#ends.length - 1];
    if (end !== undefined && this.offset + bytes > end)
      return `field ${this.#field} runs past the end of the message holding it`;
    this.#skipLeft = bytes;
    this.#mode = SKIP;
    return undefined;
  }

  #length(length: number): string | undefined {
    this.#readingLength = false;
    const field = this.#field;
    if (length > MAX_LENGTH) return `field ${field} declares ${length} bytes`;
    const end = this.#ends[this.#ends.length - 1];
    if (end !== undefined && this.offset + length > end)
      return `field ${field} (${length} bytes) runs past the end of the message holding it`;
    const { path, maxMessageBytes } = this.options;
    const depth = this.#ends.length;
    if (depth >= path.length || path[depth] !== field) {
      if (length > 0) this.#skip(length);
      return undefined;
    }
    if (depth < path.length - 1) {
      // A message on the way down: its fields are read in turn.
      this.#ends.push(this.offset + length);
      return undefined;
    }
    if (length > maxMessageBytes)
      return `a message of field ${field} is ${length} bytes; the limit is ${maxMessageBytes}`;
    if (length === 0) return this.options.onMessage(new Uint8Array(0));
    if (this.#buffer.length < length)
      this.#buffer = new Uint8Array(Math.min(maxMessageBytes, Math.max(length, this.#buffer.length * 2)));
    this.#wanted = length;
    this.#filled = 0;
    this.#mode = COLLECT;
    return undefined;
  }
}

/**
 * What a message's fields must be, for a strict check: per field number, its scalar kind or the
 * shape of the message it holds. Fields not listed may be of any (non-group) wire type.
 */
export interface WireShape {
  readonly [field: number]: 'varint' | 'string' | 'fixed32' | 'fixed64' | WireShape;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Whether `bytes` are a valid encoding of a message of this shape, as a strict decoder (prost, which
 * the CLI uses) would accept it: every listed field with its wire type, strings valid UTF-8, nested
 * messages valid in turn, nothing running past its end. For telling two layouts apart.
 */
export function isValidMessage(bytes: Uint8Array, shape: WireShape, depth = 0): boolean {
  if (depth > 32) return false;
  let at = 0;
  const varint = (): number | undefined => {
    let value = 0;
    let scale = 1;
    for (let k = 0; k < MAX_VARINT_BYTES; k++) {
      const byte = bytes[at++];
      if (byte === undefined) return undefined;
      value += (byte & 0x7f) * scale;
      scale *= 128;
      if ((byte & 0x80) === 0) return value;
    }
    return undefined;
  };
  while (at < bytes.length) {
    const tag = varint();
    if (tag === undefined) return false;
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (field === 0) return false;
    const kind = shape[field];
    if (wireType === 0) {
      if ((kind !== undefined && kind !== 'varint') || varint() === undefined) return false;
    } else if (wireType === 1 || wireType === 5) {
      if (kind !== undefined && kind !== (wireType === 1 ? 'fixed64' : 'fixed32')) return false;
      at += wireType === 1 ? 8 : 4;
      if (at > bytes.length) return false;
    } else if (wireType === 2) {
      const length = varint();
      if (length === undefined || at + length > bytes.length) return false;
      const body = bytes.subarray(at, at + length);
      at += length;
      if (kind === 'string') {
        try {
          strictUtf8.decode(body);
        } catch {
          return false;
        }
      } else if (typeof kind === 'object') {
        if (!isValidMessage(body, kind, depth + 1)) return false;
      } else if (kind !== undefined) return false;
    } else return false;
  }
  return true;
}
