// Per-file problem list with a cap on warnings so a bad file cannot grow it without bound.
import type { JunitProblem } from './types.ts';

/** Where a problem was found, 1-based. */
export interface Position {
  line: number;
  column: number;
}

/** Thrown inside the parser to stop at the first file error; never escapes `createJunitParser`. */
export class JunitFileError extends Error {
  readonly position: Position | null;

  constructor(message: string, position: Position | null) {
    super(message);
    this.name = 'JunitFileError';
    this.position = position;
  }
}

export interface ProblemList {
  warn(message: string, position?: Position | null): void;
  error(message: string, position?: Position | null): void;
  /** All problems, with a final warning counting the ones dropped over the cap. */
  list(): JunitProblem[];
}

export function createProblemList(maxWarnings: number): ProblemList {
  const problems: JunitProblem[] = [];
  let warnings = 0;
  const add = (severity: JunitProblem['severity'], message: string, position?: Position | null) => {
    problems.push(position ? { severity, message, ...position } : { severity, message });
  };
  return {
    warn(message, position) {
      warnings++;
      if (warnings <= maxWarnings) add('warning', message, position);
    },
    error(message, position) {
      add('error', message, position);
    },
    list() {
      const dropped = warnings - maxWarnings;
      if (dropped <= 0) return [...problems];
      return [...problems, { severity: 'warning', message: `${dropped} more warnings not shown` }];
    },
  };
}
