// Reading dashboard pages through app.inject: signing in with a token, GETs with the session cookie,
// and a page's table rows and chart names as text.
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

/** Signs in with an API token; the session cookie (`name=value`) to send back. */
export async function signIn(t: TestApp, token: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ token }).toString(),
  });
  expect(res.statusCode, res.body).toBe(303);
  return String(res.headers['set-cookie']).split(';')[0] as string;
}

export const getPage = (t: TestApp, url: string, cookie?: string): Promise<LightMyRequestResponse> =>
  t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });

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
