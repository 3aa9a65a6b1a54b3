/**
 * HTML built from tagged templates that escape by default. Every `${value}` in an `html` template is
 * escaped unless it is already `Html` (the result of another `html` template, or of `raw`, which is
 * only ever given text this module or the chart code produced). Templates quote every attribute with
 * double quotes, and the escaping covers both quotes, so a value is safe in text and in attributes.
 */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

/** What may appear in `${…}`: text (escaped), numbers, markup, lists of those; null, undefined and booleans render nothing. */
export type Part = Html | string | number | boolean | null | undefined | readonly Part[];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

function render(part: Part): string {
  if (part instanceof Html) return part.value;
  if (part === null || part === undefined || typeof part === 'boolean') return '';
  if (typeof part === 'number') return Number.isFinite(part) ? String(part) : '';
  if (typeof part === 'string') return escapeHtml(part);
  return part.map(render).join('');
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** Markup taken as is. Only for text produced by this code (never for data). */
export function raw(markup: string): Html {
  return new Html(markup);
}

/** Joins parts with a separator (itself escaped unless Html). */
export function join(parts: readonly Part[], separator: Part): Html {
  const out: Part[] = [];
  parts.forEach((p, i) => {
    if (i > 0) out.push(separator);
    out.push(p);
  });
  return new Html(render(out));
}

/**
 * A link target from data (CI check URLs, ticket links): kept only when it is an absolute http(s)
 * URL, so a `javascript:` or `data:` URL stored by a client can never become a live link.
 */
export function safeHref(url: string | null | undefined): string | undefined {
  if (url === null || url === undefined || url === '') return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** A link to an external URL from data, or the text alone when the URL is not a safe http(s) one. */
export function externalLink(url: string | null | undefined, text: Part): Html {
  const href = safeHref(url);
  return href === undefined ? html`${text}` : html`<a href="${href}" rel="noopener noreferrer">${text}</a>`;
}
