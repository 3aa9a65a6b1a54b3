// Finds the parts of a failure text that identify it: the headline (exception type and message)
// and the top stack frames, for Java, Python (traceback and pytest), JavaScript, Go, Ruby and C#.
import { stripAnsi } from './normalise.ts';

export interface FailureAnatomy {
  /** The line that says what went wrong, as written (colour codes removed); '' when there is none. */
  headline: string;
  /** The innermost stack frames, at most `MAX_FRAMES`, as written. */
  frames: string[];
}

export const MAX_FRAMES = 3;

const FRAME_PATTERNS: readonly RegExp[] = [
  /^at\s/, // Java, Kotlin, JavaScript, C#
  /^❯\s/, // vitest
  /^File ".*", line \d+/, // Python traceback
  /^(?:# )?\S+:\d+:in\b/, // Ruby
  /^\S+\.py:\d+: \w+$/, // pytest location line: tests/test_x.py:5: AssertionError
];

/** The file line under each function line of a Go stack trace: `/src/x.go:88 +0x1d`. */
const GO_FILE_LINE = /^\S+\.go:\d+(?: \+0x[0-9a-f]+)?$/;

const NOISE_PATTERNS: readonly RegExp[] = [
  /^Traceback \(most recent call last\):$/,
  /^During handling of the above exception/,
  /^The above exception was the direct cause/,
  /^\.\.\. \d+ (?:more|common frames omitted)$/,
  /^goroutine \d+ \[.*\]:$/,
  /^(?:=== RUN|--- FAIL:|--- PASS:)/,
  /^[-=_]{3,}/,
];

function isNoise(line: string): boolean {
  return NOISE_PATTERNS.some((pattern) => pattern.test(line));
}

/** Splits a failure text into its headline and top frames. */
export function failureAnatomy(text: string): FailureAnatomy {
  const raw = stripAnsi(text).split(/\r?\n/);
  const lines = raw.map((line) => line.trim()).filter((line) => line !== '' && !isNoise(line));
  const { frames, messages } = classify(lines);
  const isTraceback = raw.some((line) => line.trim() === 'Traceback (most recent call last):');
  return {
    headline: isTraceback ? tracebackHeadline(raw) : messageHeadline(messages, frames),
    frames: isTraceback ? frames.slice(-MAX_FRAMES) : frames.slice(0, MAX_FRAMES),
  };
}

function classify(lines: readonly string[]): { frames: string[]; messages: string[] } {
  const frames: string[] = [];
  const messages: string[] = [];
  lines.forEach((line, i) => {
    if (GO_FILE_LINE.test(line)) return;
    const isGoFunction = GO_FILE_LINE.test(lines[i + 1] ?? '');
    if (isGoFunction || FRAME_PATTERNS.some((pattern) => pattern.test(line))) frames.push(line);
    else messages.push(line);
  });
  return { frames, messages };
}

/** A Python traceback ends with the exception; the indented lines above it are frames and source. */
function tracebackHeadline(raw: readonly string[]): string {
  const unindented = raw.filter((line) => /^\S/.test(line) && !isNoise(line.trim()));
  return unindented.at(-1)?.trim() ?? '';
}

function messageHeadline(messages: readonly string[], frames: readonly string[]): string {
  const pytestError = messages.find((line) => /^E\s/.test(line));
  if (pytestError === undefined) return messages[0] ?? '';
  // pytest puts the exception type on its location line; put it in front of the message.
  const message = pytestError.replace(/^E\s+/, '');
  const location = frames.find((line) => /\.py:\d+: \w+$/.test(line));
  const type = location?.slice(location.lastIndexOf(' ') + 1);
  return type === undefined || message.startsWith(type) ? message : `${type}: ${message}`;
}
