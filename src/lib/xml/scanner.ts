// Over ~350 lines: one tokenizer whose well-formedness checks (names, attributes, references, end
// tags) run inside its single scanning loop and share its position state; they stay beside that loop.
// A streaming XML 1.0 tokenizer, written for speed (JUnit reports are its input): it finds markup with
// `indexOf` and hands out slices of its input instead of reading one character at a time.
//
// It checks well-formedness as saxes does (names, attribute syntax, quoting, duplicate
// attributes, entity and character references, `]]>` in text, comments, processing
// instructions, the XML declaration, matching end tags, one root, only whitespace outside it)
// and reports errors in saxes' words, so that a file is accepted when saxes accepts it
// (test/unit/lib/xml-scanner.test.ts compares the two). One difference: characters XML does not
// allow in content are not looked for (the caller replaces C0 control characters before the
// scanner sees them; U+FFFE, U+FFFF and unpaired surrogates pass through, where saxes rejects the
// file): a scan of every character for them cost more than the rest of the parse of a typical
// report. A DTD is never read: `<!DOCTYPE` is handed to `handler.doctype()`. No
// entity besides the five predefined ones and character references exists.
//
// Streaming: input arrives in chunks; a construct cut by a chunk boundary waits for the next
// chunk, except text and CDATA (delivered in pieces) and comments and processing instructions
// (skipped as they go), so a long node is never held whole. A tag must fit in `MAX_TAG_CHARS`.
//
// One file over the size guideline on purpose: the well-formedness checks share the scanner's state
// and hot loop, and splitting them would add a call per construct on the parse's hottest path.

export interface XmlScannerHandler {
  /** `span`: the raw length of the tag in characters, from "<" to ">" inclusive. */
  openTag(name: string, attributes: Record<string, string>, selfClosing: boolean, span: number): void;
  /** Also called right after openTag for a self-closing tag. */
  closeTag(name: string): void;
  /** Asked at the start of each text node and CDATA section: whether to deliver its content to `text`. */
  wantsText(): boolean;
  /** Character data, entities decoded, line ends normalised; one node may come in several pieces. */
  text(piece: string): void;
  /** A `<!DOCTYPE` was met (never read further). */
  doctype(): void;
  /** A text node or CDATA section that just ended is longer than `maxTextChars` (checked at its end, so whatever the chunking). */
  textTooLong(length: number): void;
}

export interface XmlScannerOptions {
  /** Longest text node or CDATA section (decoded characters) before `handler.textTooLong`. */
  maxTextChars: number;
}

/** Malformed XML; `message` in saxes' words, without a position prefix. */
export class XmlSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = 'XmlSyntaxError';
  }
}

/** The longest start tag (with its attributes) the scanner waits for. */
export const MAX_TAG_CHARS = 16 * 1024 * 1024;

const GT = 0x3e;
const AMP = 0x26;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const EQUAL = 0x3d;
const QUOTE = 0x22;
const APOS = 0x27;
const HASH = 0x23;
const CLOSE_BRACKET = 0x5d;
const SPACE = 0x20;
const TAB = 0x09;
const NL = 0x0a;
const CR = 0x0d;

/** Text modes: where the next character belongs. */
const TEXT = 0;
const CDATA = 1;
const COMMENT = 2;
const PI = 3;

const XML_DECL =
  /^<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(["'])1\.[0-9]+\1(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(["'])[A-Za-z][A-Za-z0-9._-]*\2)?(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*(["'])(?:yes|no)\3)?[ \t\r\n]*\?>$/;

const NOWHERE = Number.MAX_SAFE_INTEGER;
const LINE_ENDS = /\r\n?/g;
/** Longest entity or character reference read: "&" with no ";" within this many characters starts none. */
const MAX_REFERENCE_CHARS = 64;

/** ASCII name characters: 2 = may start a name, 1 = may continue one, 0 = neither. */
const ASCII_NAME = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x3a;
  const other = (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e;
  ASCII_NAME[c] = letter ? 2 : other ? 1 : 0;
}

function isNameStartCode(c: number): boolean {
  if (c < 128) return ASCII_NAME[c] === 2;
  return (
    (c >= 0xc0 && c <= 0xd6) ||
    (c >= 0xd8 && c <= 0xf6) ||
    (c >= 0xf8 && c <= 0x2ff) ||
    (c >= 0x370 && c <= 0x37d) ||
    (c >= 0x37f && c <= 0x1fff) ||
    (c >= 0x200c && c <= 0x200d) ||
    (c >= 0x2070 && c <= 0x218f) ||
    (c >= 0x2c00 && c <= 0x2fef) ||
    (c >= 0x3001 && c <= 0xd7ff) ||
    (c >= 0xf900 && c <= 0xfdcf) ||
    (c >= 0xfdf0 && c <= 0xfffd) ||
    (c >= 0x10000 && c <= 0xeffff)
  );
}

function isNameCode(c: number): boolean {
  if (c < 128) return ASCII_NAME[c] !== 0;
  return isNameStartCode(c) || c === 0xb7 || (c >= 0x300 && c <= 0x36f) || (c >= 0x203f && c <= 0x2040);
}

function isSpace(c: number): boolean {
  return c === SPACE || c === NL || c === TAB || c === CR;
}

function isXmlChar(c: number): boolean {
  return (
    c === TAB ||
    c === NL ||
    c === CR ||
    (c >= 0x20 && c <= 0xd7ff) ||
    (c >= 0xe000 && c <= 0xfffd) ||
    (c >= 0x10000 && c <= 0x10ffff)
  );
}

/** The code point at `i` (a surrogate pair read whole), and its length in code units via `codeLength`. */
function codeAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const low = text.charCodeAt(i + 1);
    if (low >= 0xdc00 && low <= 0xdfff) return 0x10000 + (c - 0xd800) * 0x400 + (low - 0xdc00);
  }
  return c;
}

function codeLength(code: number): number {
  return code >= 0x10000 ? 2 : 1;
}

/**
 * The next position of `needle` in the scanner's buffer from a given index, remembered until a later
 * index is asked for (indexes only grow until the buffer changes): one search per occurrence.
 */
class Finder {
  private at = -1;

  constructor(private readonly needle: string) {}

  reset(): void {
    this.at = -1;
  }

  /** The position of the next `needle` at or after `from` in `buf`, or NOWHERE. */
  next(buf: string, from: number): number {
    let at = this.at;
    if (at < from) {
      at = buf.indexOf(this.needle, from);
      if (at === -1) at = NOWHERE;
      this.at = at;
    }
    return at;
  }
}

/** Returned by `markup` when a construct continues past the data received so far. */
const INCOMPLETE = -1;

export class XmlScanner {
  private buf = '';
  /** Next unconsumed index in `buf`; `base` is the absolute offset of `buf[0]` in the input. */
  private i = 0;
  private base = 0;
  /** A final CR or high surrogate of the last chunk, held until the next one shows what follows it. */
  private carry = '';
  private mode = TEXT;
  private readonly names: string[] = [];
  private sawRoot = false;
  /** Whether the input started with a byte order mark (skipped). */
  private bom = false;
  private started = false;
  private closedRoot = false;
  private ended = false;
  /** Whether the current text node / CDATA section is delivered, and its decoded length so far. */
  private nodeOpen = false;
  private nodeWanted = false;
  private nodeLength = 0;
  /** `buf.length` when a tag last waited for its ">" (-1: none waiting); see `stillWaiting`. */
  private waitedAt = -1;
  /** Where the next "<", "&", "\r", "\n", "\t" and "]]>" are in `buf`. */
  private readonly lt = new Finder('<');
  private readonly amp = new Finder('&');
  private readonly cr = new Finder('\r');
  private readonly nl = new Finder('\n');
  private readonly tab = new Finder('\t');
  private readonly cdEnd = new Finder(']]>');
  /** Lines counted up to absolute offset `lineAt`; `lineStart`: absolute offset where the current line starts. */
  private line = 1;
  private lineAt = 0;
  private lineStart = 0;
  /** Absolute offset just after the construct being reported (for `position`). */
  private at = 0;

  constructor(
    private readonly handler: XmlScannerHandler,
    private readonly options: XmlScannerOptions,
  ) {}

  /** Line and column (1-based) just after the construct being reported. */
  position(): { line: number; column: number } {
    return this.positionAt(this.at);
  }

  write(chunk: string): void {
    if (this.ended) throw new Error('XmlScanner.write() after close()');
    let text = this.carry === '' ? chunk : this.carry + chunk;
    this.carry = '';
    const last = text.charCodeAt(text.length - 1);
    if (last === CR || (last >= 0xd800 && last <= 0xdbff)) {
      this.carry = text.slice(-1);
      text = text.slice(0, -1);
    }
    if (text === '') return;
    this.append(text);
    this.run(false);
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.carry !== '') {
      this.append(this.carry);
      this.carry = '';
    }
    this.run(true);
    this.finish();
  }

  private append(text: string): void {
    const start = this.i;
    if (start > 0) {
      this.countLines(this.base + start);
      this.base += start;
    }
    const kept = start < this.buf.length ? this.buf.slice(start) : '';
    this.buf = kept === '' ? text : kept + text;
    this.i = 0;
    for (const finder of [this.lt, this.amp, this.cr, this.nl, this.tab, this.cdEnd]) finder.reset();
    if (this.waitedAt !== -1) this.waitedAt -= start;
    if (!this.started) {
      this.started = true;
      if (this.buf.charCodeAt(0) === 0xfeff) {
        this.bom = true;
        this.i = 1;
      }
    }
  }

  private run(end: boolean): void {
    const buf = this.buf;
    const n = buf.length;
    let i = this.i;
    while (i < n) {
      if (this.mode === TEXT) {
        const lt = this.lt.next(this.buf, i);
        const stop = lt === NOWHERE ? n : lt;
        if (stop > i || (lt !== NOWHERE && this.nodeOpen)) {
          const done = this.textRun(i, stop, lt !== NOWHERE || end);
          if (done < stop) {
            i = done;
            break;
          }
        }
        i = stop;
        if (lt === NOWHERE) break;
        if (this.waitedAt !== -1 && !end && this.stillWaiting(lt)) break;
        const next = this.markup(lt, end);
        if (next === INCOMPLETE) break;
        this.waitedAt = -1;
        i = next;
      } else if (this.mode === CDATA) {
        i = this.cdata(i);
        if (this.mode === CDATA) break;
      } else {
        const close = this.mode === COMMENT ? this.commentEnd(i) : this.piEnd(i);
        if (close < 0) {
          i = -close - 1;
          break;
        }
        i = close;
        this.mode = TEXT;
      }
    }
    this.i = i;
  }

  /** After a wait for a tag's end: only worth another try when a ">" arrived since. */
  private stillWaiting(lt: number): boolean {
    const from = Math.max(lt, this.waitedAt - 1);
    return this.buf.indexOf('>', from) === -1 && this.buf.length - lt <= MAX_TAG_CHARS;
  }

  /** After the last chunk: whatever is still open is reported in saxes' order. */
  private finish(): void {
    if (!this.sawRoot) this.failAt('document must contain a root element.', this.endOffset());
    const open = this.names.at(-1);
    if (open !== undefined) this.failAt(`unclosed tag: ${open}`, this.endOffset());
    if (this.mode !== TEXT || this.i < this.buf.length) this.failAt('unexpected end.', this.endOffset());
  }

  /** The end of the data, as an index in `buf` (what `failAt` takes). */
  private endOffset(): number {
    return this.buf.length;
  }

  // ---- text -------------------------------------------------------------------------------

  /**
   * Character data from `i` to `stop` (the next "<" or the end of the data so far; `final`: no
   * more of this node will come after `stop`). Returns how far it got: less than `stop` when the
   * end must wait for the next chunk (an entity reference or "]]" cut by the boundary).
   */
  private textRun(i: number, stop: number, final: boolean): number {
    const buf = this.buf;
    if (!this.nodeOpen) {
      this.nodeOpen = true;
      this.nodeLength = 0;
      this.nodeWanted = this.names.length > 0 && this.handler.wantsText();
    }
    if (this.names.length === 0) return this.textOutsideRoot(i, stop, final);
    let end = stop;
    if (!final) {
      // Hold back what the next chunk may complete: "]" or "]]" (of "]]>"), an unterminated entity.
      while (end > i && end > stop - 2 && buf.charCodeAt(end - 1) === CLOSE_BRACKET) end--;
      const amp = buf.lastIndexOf('&', end - 1);
      if (amp >= i && buf.indexOf(';', amp) === -1) {
        if (end - amp > MAX_REFERENCE_CHARS) this.unescapedAmp(amp);
        end = amp;
      }
    }
    const cdEnd = this.cdEnd.next(this.buf, i);
    if (cdEnd + 2 < end) this.failAt('the string "]]>" is disallowed in char data.', cdEnd + 3);
    let length = end - i;
    if (this.amp.next(this.buf, i) < end || this.cr.next(this.buf, i) < end) {
      if (this.nodeWanted) {
        const decoded = this.decode(i, end, false);
        length = decoded.length;
        if (length > 0) this.handler.text(decoded);
      } else {
        length = this.decodedLength(i, end);
      }
    } else if (this.nodeWanted && length > 0) {
      this.handler.text(buf.slice(i, end));
    }
    this.nodeLength += length;
    if (final) this.endNode(end);
    return final ? stop : end;
  }

  private endNode(at: number): void {
    this.nodeOpen = false;
    if (this.nodeLength > this.options.maxTextChars) {
      this.at = this.base + at;
      this.handler.textTooLong(this.nodeLength);
    }
  }

  private textOutsideRoot(i: number, stop: number, final: boolean): number {
    const buf = this.buf;
    for (let k = i; k < stop; k++) {
      if (!isSpace(buf.charCodeAt(k))) this.failAt('text data outside of root node.', stop);
    }
    if (final) this.nodeOpen = false;
    return stop;
  }

  /** The length `decode(i, end, false)` would return, without building the string (checks references). */
  private decodedLength(i: number, end: number): number {
    const buf = this.buf;
    let length = end - i;
    for (let k = this.amp.next(this.buf, i); k < end; k = this.amp.next(this.buf, k + 1)) {
      const semi = this.referenceEnd(k, end);
      length -= semi + 1 - k - this.entity(k + 1, semi).length;
    }
    for (let k = this.cr.next(this.buf, i); k < end; k = this.cr.next(this.buf, k + 1)) {
      if (buf.charCodeAt(k + 1) === NL) length--;
    }
    return length;
  }

  /** The ";" that ends the reference starting with "&" at `k` (before `end`). */
  private referenceEnd(k: number, end: number): number {
    const semi = this.buf.indexOf(';', k + 1);
    if (semi === -1 || semi >= end || semi - k > MAX_REFERENCE_CHARS) this.unescapedAmp(k);
    return semi;
  }

  /**
   * Decodes character data (`inAttribute` false: text; true: an attribute value, where
   * tabs and line ends become spaces) and checks its entity references.
   */
  private decode(i: number, end: number, inAttribute: boolean): string {
    const buf = this.buf;
    let out = '';
    let from = i;
    for (;;) {
      let k = Math.min(this.amp.next(this.buf, from), this.cr.next(this.buf, from));
      if (inAttribute) k = Math.min(k, this.nl.next(this.buf, from), this.tab.next(this.buf, from));
      if (k >= end) break;
      const c = buf.charCodeAt(k);
      if (c === AMP) {
        const semi = this.referenceEnd(k, end);
        out += buf.slice(from, k) + this.entity(k + 1, semi);
        from = semi + 1;
      } else if (c === CR) {
        out += buf.slice(from, k) + (inAttribute ? ' ' : '\n');
        from = k + (buf.charCodeAt(k + 1) === NL ? 2 : 1);
      } else {
        out += `${buf.slice(from, k)} `;
        from = k + 1;
      }
    }
    return from === i ? buf.slice(i, end) : out + buf.slice(from, end);
  }

  /** The text of the reference between "&" and ";" (`start`..`semi` in `buf`). */
  private entity(start: number, semi: number): string {
    const buf = this.buf;
    const length = semi - start;
    const first = buf.charCodeAt(start);
    if (length === 2 && buf.charCodeAt(start + 1) === 0x74 /* t */) {
      if (first === 0x6c /* l */) return '<';
      if (first === 0x67 /* g */) return '>';
    } else if (length === 3 && buf.startsWith('amp', start)) {
      return '&';
    } else if (length === 4) {
      if (buf.startsWith('quot', start)) return '"';
      if (buf.startsWith('apos', start)) return "'";
    }
    if (length === 0) this.failAt('empty entity name.', semi + 1);
    if (first !== HASH) {
      const name = buf.slice(start, semi);
      this.failAt(isName(name) ? 'undefined entity.' : 'disallowed character in entity name.', semi + 1);
    }
    const body = buf.slice(start, semi);
    let code = Number.NaN;
    if (body.charCodeAt(1) === 0x78 && /^#x[0-9a-f]+$/i.test(body)) code = Number.parseInt(body.slice(2), 16);
    else if (/^#[0-9]+$/.test(body)) code = Number.parseInt(body.slice(1), 10);
    if (!isXmlChar(code)) this.failAt('malformed character entity.', semi + 1);
    return String.fromCodePoint(code);
  }

  /** An "&" that starts no reference (no ";" before the next markup): saxes reads on to the next ";" and fails there. */
  private unescapedAmp(k: number): never {
    return this.failAt('disallowed character in entity name.', k + 1);
  }

  // ---- markup -----------------------------------------------------------------------------

  /** Handles the markup starting with "<" at `lt`; returns the index after it, or INCOMPLETE. */
  private markup(lt: number, end: boolean): number {
    const buf = this.buf;
    if (this.nodeOpen) this.endNode(lt);
    if (lt + 1 >= buf.length) return INCOMPLETE;
    const c = buf.charCodeAt(lt + 1);
    if (c === SLASH) return this.endTag(lt, end);
    if (c === BANG) return this.bang(lt);
    if (c === QUESTION) return this.pi(lt, end);
    if (isNameStartCode(codeAt(buf, lt + 1))) return this.startTag(lt, end);
    return this.failAt('disallowed character in tag name', lt + 2);
  }

  private startTag(lt: number, end: boolean): number {
    const buf = this.buf;
    const n = buf.length;
    let k = this.nameEnd(lt + 1);
    if (k >= n) return this.incomplete(lt, end);
    const name = buf.slice(lt + 1, k);
    if (this.closedRoot) this.failAt('documents may contain only one root.', k + 1);
    const attributes: Record<string, string> = {};
    let c = buf.charCodeAt(k);
    if (!isSpace(c) && c !== GT && c !== SLASH) this.failAt('disallowed character in tag name.', k + 1);
    let spaced = false;
    for (;;) {
      if (k >= n) return this.incomplete(lt, end);
      c = buf.charCodeAt(k);
      if (isSpace(c)) {
        spaced = true;
        k++;
        continue;
      }
      if (c === GT) return this.opened(lt, k + 1, name, attributes, false);
      if (c === SLASH) {
        if (k + 1 >= n) return this.incomplete(lt, end);
        if (buf.charCodeAt(k + 1) !== GT)
          this.failAt('forward-slash in opening tag not followed by >.', k + 2);
        return this.opened(lt, k + 2, name, attributes, true);
      }
      if (!isNameStartCode(codeAt(buf, k))) this.failAt('disallowed character in attribute name.', k + 1);
      if (!spaced) this.failAt('no whitespace between attributes.', k + 1);
      const nameStart = k;
      k = this.nameEnd(k);
      if (k >= n) return this.incomplete(lt, end);
      const key = attributeName(buf, nameStart, k);
      c = buf.charCodeAt(k);
      if (c !== EQUAL && !isSpace(c))
        this.failAt(c === GT ? 'attribute without value.' : 'disallowed character in attribute name.', k + 1);
      while (k < n && isSpace(buf.charCodeAt(k))) k++;
      if (k >= n) return this.incomplete(lt, end);
      if (buf.charCodeAt(k) !== EQUAL) this.failAt('attribute without value.', k + 1);
      k++;
      while (k < n && isSpace(buf.charCodeAt(k))) k++;
      if (k >= n) return this.incomplete(lt, end);
      const quote = buf.charCodeAt(k);
      if (quote !== QUOTE && quote !== APOS) this.failAt('unquoted attribute value.', k + 1);
      const valueStart = k + 1;
      const close = buf.indexOf(quote === QUOTE ? '"' : "'", valueStart);
      const lessThan = this.lt.next(this.buf, valueStart);
      if (lessThan < (close === -1 ? n : close)) this.failAt('disallowed character.', lessThan + 1);
      if (close === -1) return this.incomplete(lt, end);
      const value = this.attributeValue(valueStart, close);
      if (Object.hasOwn(attributes, key)) this.failAt(`duplicate attribute: ${key}.`, this.tagEnd(close));
      if (key === '__proto__')
        Object.defineProperty(attributes, key, { value, enumerable: true, writable: true });
      else attributes[key] = value;
      k = close + 1;
      spaced = false;
    }
  }

  /** Where saxes reports a duplicate attribute: at the end of the tag (or of the data so far). */
  private tagEnd(from: number): number {
    const gt = this.buf.indexOf('>', from);
    return gt === -1 ? this.buf.length : gt + 1;
  }

  private attributeValue(start: number, close: number): string {
    if (
      this.amp.next(this.buf, start) < close ||
      this.nl.next(this.buf, start) < close ||
      this.cr.next(this.buf, start) < close ||
      this.tab.next(this.buf, start) < close
    )
      return this.decode(start, close, true);
    return this.buf.slice(start, close);
  }

  private opened(
    lt: number,
    after: number,
    name: string,
    attributes: Record<string, string>,
    selfClosing: boolean,
  ): number {
    this.sawRoot = true;
    this.at = this.base + after;
    const handler = this.handler;
    handler.openTag(name, attributes, selfClosing, after - lt);
    if (selfClosing) {
      handler.closeTag(name);
      if (this.names.length === 0) this.closedRoot = true;
    } else {
      this.names.push(name);
    }
    return after;
  }

  private endTag(lt: number, end: boolean): number {
    const buf = this.buf;
    const gt = buf.indexOf('>', lt + 2);
    const k = this.nameEnd(lt + 2);
    if (k >= buf.length) return this.incomplete(lt, end);
    let j = k;
    while (j < buf.length && isSpace(buf.charCodeAt(j))) j++;
    if (j >= buf.length) return this.incomplete(lt, end);
    if (j !== gt) this.failAt('disallowed character in closing tag.', j + 1);
    const name = buf.slice(lt + 2, k);
    this.at = this.base + gt + 1;
    if (name === '') this.failAt('weird empty close tag.', gt + 1);
    const names = this.names;
    const open = names.at(-1);
    if (open !== name)
      this.failAt(open === undefined ? `unmatched closing tag: ${name}.` : 'unexpected close tag.', gt + 1);
    names.pop();
    this.handler.closeTag(name);
    if (names.length === 0) this.closedRoot = true;
    return gt + 1;
  }

  /** `<!`: a comment, CDATA section or DOCTYPE. */
  private bang(lt: number): number {
    const buf = this.buf;
    const rest = buf.length - lt;
    if (buf.startsWith('<!--', lt)) {
      this.mode = COMMENT;
      return lt + 4;
    }
    if (buf.startsWith('<![CDATA[', lt)) {
      if (this.names.length === 0) this.failAt('text data outside of root node.', lt + 9);
      this.mode = CDATA;
      this.nodeOpen = true;
      this.nodeLength = 0;
      this.nodeWanted = this.handler.wantsText();
      return lt + 9;
    }
    if (buf.startsWith('<!DOCTYPE', lt)) {
      this.at = this.base + lt + 9;
      if (this.sawRoot) this.failAt('inappropriately located doctype declaration.', lt + 9);
      this.handler.doctype();
      return this.failAt('DOCTYPE declarations are not supported.', lt + 9);
    }
    const prefixes = ['<!--', '<![CDATA[', '<!DOCTYPE'];
    if (rest < 9 && prefixes.some((p) => p.startsWith(buf.slice(lt, lt + rest)))) return INCOMPLETE;
    return this.failAt('incorrect syntax.', Math.min(lt + 9, buf.length));
  }

  /** In a comment from `i`: the index after "-->", or -(where to resume)-1 when it did not end yet. */
  private commentEnd(i: number): number {
    const buf = this.buf;
    const dashes = buf.indexOf('--', i);
    if (dashes === -1 || dashes + 2 >= buf.length) {
      const resume = dashes === -1 ? Math.max(i, buf.length - 1) : dashes;
      return -resume - 1;
    }
    if (buf.charCodeAt(dashes + 2) !== GT) this.failAt('malformed comment.', dashes + 3);
    return dashes + 3;
  }

  /** `<?`: the XML declaration or a processing instruction. */
  private pi(lt: number, end: boolean): number {
    const buf = this.buf;
    const k = this.nameEnd(lt + 2);
    if (k >= buf.length) return this.incomplete(lt, end);
    const target = buf.slice(lt + 2, k);
    const c = buf.charCodeAt(k);
    if (target === '') {
      if (c === QUESTION || isSpace(c)) this.failAt('processing instruction without a target.', lt + 3);
      this.failAt('disallowed character in processing instruction name.', lt + 3);
    }
    if (!isNameStartCode(codeAt(target, 0)))
      this.failAt('disallowed character in processing instruction name.', lt + 3);
    if (c !== QUESTION && !isSpace(c))
      this.failAt('disallowed character in processing instruction name.', k + 1);
    if (target === 'xml') return this.xmlDeclaration(lt, end);
    if (target.toLowerCase() === 'xml')
      this.failAt('the XML declaration must appear at the start of the document.', k);
    this.mode = PI;
    return k;
  }

  private xmlDeclaration(lt: number, end: boolean): number {
    const buf = this.buf;
    const absolute = this.base + lt;
    if (absolute !== (this.bom ? 1 : 0))
      this.failAt('an XML declaration must be at the start of the document.', lt + 6);
    const close = buf.indexOf('?>', lt + 5);
    if (close === -1) return this.incomplete(lt, end);
    const declaration = buf.slice(lt, close + 2);
    if (!XML_DECL.test(declaration)) this.failAt('malformed XML declaration.', close + 2);
    return close + 2;
  }

  /** In a processing instruction from `i`: the index after "?>", or -(where to resume)-1. */
  private piEnd(i: number): number {
    const buf = this.buf;
    const close = buf.indexOf('?>', i);
    if (close === -1) {
      return -Math.max(i, buf.length - 1) - 1;
    }
    return close + 2;
  }

  /** In a CDATA section from `i`: delivers its content; leaves CDATA mode at "]]>". */
  private cdata(i: number): number {
    const buf = this.buf;
    const close = buf.indexOf(']]>', i);
    let stop = close === -1 ? Math.max(i, buf.length - 2) : close;
    // A CR held apart from the LF after it would give two line ends.
    if (close === -1 && stop > i && buf.charCodeAt(stop - 1) === CR) stop--;
    let length = stop - i;
    if (stop > i) {
      const cr = this.cr.next(this.buf, i);
      const raw = buf.slice(i, stop);
      const piece = cr < stop ? raw.replace(LINE_ENDS, '\n') : raw;
      length = piece.length;
      if (this.nodeWanted) this.handler.text(piece);
    }
    this.nodeLength += length;
    if (close === -1) return stop;
    this.mode = TEXT;
    this.endNode(close + 3);
    return close + 3;
  }

  // ---- helpers ----------------------------------------------------------------------------

  /** The end of the name starting at `k` (name characters only; the caller checks the first). */
  private nameEnd(k: number): number {
    const buf = this.buf;
    const n = buf.length;
    while (k < n) {
      const c = buf.charCodeAt(k);
      if (c < 128) {
        if (ASCII_NAME[c] === 0) return k;
        k++;
      } else {
        const code = codeAt(buf, k);
        if (!isNameCode(code)) return k;
        k += codeLength(code);
      }
    }
    return k;
  }

  /** A tag (or declaration) starting at `lt` goes on past the data so far: wait for a ">" to arrive. */
  private incomplete(lt: number, end: boolean): number {
    const n = this.buf.length;
    if (end) return INCOMPLETE;
    if (n - lt > MAX_TAG_CHARS) this.failAt(`a tag is longer than ${MAX_TAG_CHARS} characters`, n);
    this.waitedAt = n;
    return INCOMPLETE;
  }

  /** Fails with `message` positioned just after `buf[index - 1]` (saxes' position: after the offending character). */
  private failAt(message: string, index: number): never {
    const { line, column } = this.positionAt(this.base + index);
    throw new XmlSyntaxError(message, line, column);
  }

  /** Line and column of absolute offset `offset` (≥ every offset asked before, within `buf`). */
  private positionAt(offset: number): { line: number; column: number } {
    if (offset > this.lineAt) this.countLines(offset);
    return { line: this.line, column: Math.max(1, offset - this.lineStart) };
  }

  /** Counts line breaks (\n, \r\n and lone \r) up to absolute offset `to` (in `buf`). */
  private countLines(to: number): void {
    const buf = this.buf;
    const end = Math.min(to - this.base, buf.length);
    let k = this.lineAt - this.base;
    if (k >= end) return;
    const crFree = buf.indexOf('\r', k) === -1 || buf.indexOf('\r', k) >= end;
    if (crFree) {
      for (;;) {
        const nl = buf.indexOf('\n', k);
        if (nl === -1 || nl >= end) break;
        this.line++;
        this.lineStart = this.base + nl + 1;
        k = nl + 1;
      }
    } else {
      for (; k < end; k++) {
        const c = buf.charCodeAt(k);
        if (c === NL || (c === CR && buf.charCodeAt(k + 1) !== NL)) {
          this.line++;
          this.lineStart = this.base + k + 1;
        }
      }
    }
    this.lineAt = this.base + end;
  }
}

function isName(text: string): boolean {
  if (text === '' || !isNameStartCode(codeAt(text, 0))) return false;
  for (let k = 0; k < text.length; ) {
    const code = codeAt(text, k);
    if (!isNameCode(code)) return false;
    k += codeLength(code);
  }
  return true;
}

/** Common attribute names as constant strings (keyed stores with them skip a string-table lookup). */
const KNOWN_NAMES = [
  'name',
  'classname',
  'file',
  'filepath',
  'time',
  'message',
  'type',
  'timestamp',
  'tests',
  'failures',
  'errors',
  'skipped',
  'hostname',
  'id',
  'line',
  'value',
  'assertions',
  'status',
];
const KNOWN_BY_LENGTH: string[][] = [];
for (const name of KNOWN_NAMES) {
  const same = KNOWN_BY_LENGTH[name.length] ?? [];
  same.push(name);
  KNOWN_BY_LENGTH[name.length] = same;
}

function attributeName(buf: string, start: number, end: number): string {
  const known = KNOWN_BY_LENGTH[end - start];
  if (known !== undefined) {
    for (const name of known) if (buf.startsWith(name, start)) return name;
  }
  return buf.slice(start, end);
}
