/**
 * Organization slugs no new organization may take: the first path segment of every route that is not
 * an organization's dashboard (src/http/app.ts, src/web/routes.ts). An organization's pages live at
 * `/{slug}…`, so an organization called `v1`, `login` or `docs` would have its overview answered by the
 * API, the sign-in page or the API reference instead. test/integration/org-slug-reserved.test.ts
 * checks this list against the server's route table.
 */
export const RESERVED_ORG_SLUGS: ReadonlySet<string> = new Set([
  'v1',
  'docs',
  'metrics',
  'healthz',
  'readyz',
  'webhooks',
  'assets',
  'login',
  'logout',
  'openapi.json',
]);

/** Why `slug` cannot name a new organization, or undefined when it can (the slug's shape is checked apart). */
export function reservedOrgSlugReason(slug: string): string | undefined {
  const lower = slug.toLowerCase();
  if (!RESERVED_ORG_SLUGS.has(lower)) return undefined;
  return `"${slug}" cannot be an organization slug: /${lower} is one of the server's own paths, so the organization's dashboard at /${lower} could not be reached; choose another slug`;
}
