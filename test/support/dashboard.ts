// Reading dashboard pages through app.inject: signing in with a token, GETs with the session cookie,
// form posts as a browser sends them, a page's CSRF token and form fields, and its table rows and chart
// names as text.
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Posts the sign-in form (`token`, and `next` if given), without a session cookie. */
export const postLogin = (t: TestApp, form: Record<string, string>): Promise<LightMyRequestResponse> =>
  t.app.inject({
    method: 'POST',
    url: '/login',
    headers: FORM,
    payload: new URLSearchParams(form).toString(),
  });

/** Signs in with an API token; the session cookie (`name=value`) to send back. */
export async function signIn(t: TestApp, token: string): Promise<string> {
  const res = await postLogin(t, { token });
  expect(res.statusCode, res.body).toBe(303);
  return String(res.headers['set-cookie']).split(';')[0] as string;
}

export const getPage = (t: TestApp, url: string, cookie?: string): Promise<LightMyRequestResponse> =>
  t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });

/** Posts `form` url-encoded with the session cookie ('' for none), as a browser submits a form (plus any `headers`). */
export const postForm = (
  t: TestApp,
  url: string,
  cookie: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { ...FORM, ...(cookie === '' ? {} : { cookie }), ...headers },
    payload: new URLSearchParams(form).toString(),
  });

/** The page's CSRF token (the first form's `_csrf` field). */
export function csrfOf(body: string): string {
  const csrf = body.match(/name="_csrf" value="([^"]+)"/)?.[1];
  if (csrf === undefined) throw new Error('no _csrf field on the page');
  return csrf;
}

/** Text of an attribute or element with the entities the pages write decoded. */
export const unhtml = (s: string): string =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/**
 * The fields of the page's settings forms (those posting to a `/settings` URL), in page order, as a
 * browser posts them: inputs (a checkbox only when checked), a select's selected option, textareas.
 */
export function formsOf(body: string): Record<string, string>[] {
  return [...body.matchAll(/<form method="post" action="[^"]*\/settings"[\s\S]*?<\/form>/g)].map(([form]) => {
    const out: Record<string, string> = {};
    for (const m of form.matchAll(/<input ([^>]*)>/g)) {
      const attrs = m[1] ?? '';
      const name = attrs.match(/name="([^"]+)"/)?.[1];
      const value = unhtml(attrs.match(/value="([^"]*)"/)?.[1] ?? '');
      if (name === undefined) continue;
      if (!attrs.includes('type="checkbox"') || /\bchecked\b/.test(attrs)) out[name] = value;
    }
    for (const m of form.matchAll(/<select [^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g)) {
      const selected = (m[2] ?? '').match(/<option value="([^"]*)" selected>/)?.[1];
      if (selected !== undefined) out[m[1] as string] = selected;
    }
    for (const m of form.matchAll(/<textarea [^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/textarea>/g)) {
      out[m[1] as string] = unhtml(m[2] ?? '');
    }
    return out;
  });
}

/** The fields of the page's first settings form (empty when it has none). */
export const formOf = (body: string): Record<string, string> => formsOf(body)[0] ?? {};

/** The rows of the page's first table body, as their cells' text. */
export function tableRows(body: string): string[][] {
  const tbody = body.match(/<tbody>([\s\S]*?)<\/tbody>/)?.[1] ?? '';
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((r) =>
    [...(r[1] ?? '').matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) =>
      (c[1] ?? '')
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  );
}

/** The accessible name of the chart with this id (its figures in words), entities decoded. */
export function chartName(body: string, id: string): string {
  const label = body.match(new RegExp(`<svg id="${id}"[^>]*aria-label="([^"]*)"`))?.[1];
  if (label === undefined) throw new Error(`no chart ${id}`);
  return label.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&amp;', '&');
}
