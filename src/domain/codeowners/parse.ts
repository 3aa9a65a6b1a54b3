// Parses a GitHub CODEOWNERS file. Lines GitHub would reject are skipped and reported, never thrown.
import { patternToRegExp } from './pattern.ts';

export interface CodeownersRule {
  /** 1-based line number in the file. */
  line: number;
  pattern: string;
  /** `@user`, `@org/team` or an email address, as written; empty means "owned by nobody". */
  owners: string[];
  /** The compiled pattern (see pattern.ts). */
  matcher: RegExp;
}

export interface CodeownersProblem {
  line: number;
  text: string;
  message: string;
}

export interface ParsedCodeowners {
  rules: CodeownersRule[];
  problems: CodeownersProblem[];
}

const USER = /^@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
const TEAM = /^@[A-Za-z0-9][\w-]*\/[A-Za-z0-9][\w.-]*$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Every rule of the file in order, and a problem for each line that had to be skipped. */
export function parseCodeowners(content: string): ParsedCodeowners {
  const rules: CodeownersRule[] = [];
  const problems: CodeownersProblem[] = [];
  content.split(/\r?\n/).forEach((text, index) => {
    const line = index + 1;
    const tokens = tokenize(text);
    const [pattern, ...owners] = tokens;
    if (pattern === undefined) return;
    const message = patternProblem(pattern) ?? ownersProblem(owners);
    if (message !== null) problems.push({ line, text, message });
    else rules.push({ line, pattern, owners, matcher: patternToRegExp(pattern) });
  });
  return { rules, problems };
}

/** Splits on whitespace, drops the comment (`#` starting a token), honours `\#` and `\ `. */
function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? '';
    const next = text[i + 1] ?? '';
    if (char === '\\' && (next === '#' || next === ' ')) {
      current += next;
      i++;
    } else if (/\s/.test(char)) {
      if (current !== '') tokens.push(current);
      current = '';
    } else if (char === '#' && current === '') {
      break;
    } else {
      current += char;
    }
  }
  if (current !== '') tokens.push(current);
  return tokens;
}

function patternProblem(pattern: string): string | null {
  if (pattern.startsWith('[') || pattern.startsWith('^[')) return 'GitLab section headers are not supported';
  if (pattern.startsWith('!')) return 'Negated patterns (!) are not supported in CODEOWNERS';
  if (/[[\]]/.test(pattern)) return 'Character ranges ([ ]) are not supported in CODEOWNERS';
  if (pattern.replace(/\//g, '') === '') return 'The pattern matches no file';
  return null;
}

function ownersProblem(owners: readonly string[]): string | null {
  const invalid = owners.find((owner) => !USER.test(owner) && !TEAM.test(owner) && !EMAIL.test(owner));
  if (invalid === undefined) return null;
  return `"${invalid}" is not an owner: expected @user, @org/team or an email address`;
}
