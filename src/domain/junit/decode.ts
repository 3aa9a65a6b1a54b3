// Incremental bytes → text decoding: UTF-8 by default, UTF-16 when the file starts with a BOM.

export interface ByteDecoder {
  decode(bytes: Uint8Array): string;
  /** Returns whatever is still buffered (e.g. an incomplete final character, as U+FFFD). */
  flush(): string;
}

/** The encoding is chosen from the first two bytes, so they are held back until both have arrived. */
export function createByteDecoder(): ByteDecoder {
  let decoder: InstanceType<typeof TextDecoder> | null = null;
  let head = new Uint8Array(0);
  const start = (bytes: Uint8Array): string => {
    const joined = new Uint8Array(head.length + bytes.length);
    joined.set(head);
    joined.set(bytes, head.length);
    head = joined;
    if (head.length < 2) return '';
    decoder = new TextDecoder(encodingFromBom(head));
    const text = decoder.decode(head, { stream: true });
    head = new Uint8Array(0);
    return text;
  };
  return {
    decode(bytes) {
      return decoder === null ? start(bytes) : decoder.decode(bytes, { stream: true });
    },
    flush() {
      if (decoder !== null) return decoder.decode();
      const rest = new TextDecoder('utf-8').decode(head);
      head = new Uint8Array(0);
      return rest;
    },
  };
}

function encodingFromBom(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}
