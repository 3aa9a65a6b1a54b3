import { ORG_SLUG_PATTERN } from '../app/tokens.ts';
import { pathSegments, repoTargets } from './paths.ts';

/**
 * Whether a request names a dashboard page, by the shape of its path alone (docs/dashboard.md,
 * "Which paths are pages"). Only these ask a visitor without a session to sign in; every other path
 * that no route serves is answered with the API's 404 envelope (ROUTE_NOT_FOUND), so a client
 * that calls a wrong URL (`/api/v1/...`, `/favicon.ico`, a typo) is told so instead of being sent to
 * a sign-in form. Nothing is looked up here: without a session an organization or repository that
 * exists must not be told apart from one that does not, so a well-shaped path of an unknown one is
 * still a page (the sign-in, then the dashboard's own 404 page).
 *
 * - `GET /{org}`: the organization's overview; `{org}` is an organization slug in any case
 *   (app/tokens.ts ORG_SLUG_PATTERN), but not `v1`, the API's prefix.
 * - `GET /{org}/repos/{host}/{owner…}/{name}[/failing | /tests | /durations | /settings | /tests/{id} | /queues/{branch}[/settings | /runs/{id} |
 *   /prs/{n}] | /pulls/{n}]` and `POST …/tests/{id}/quarantine | flag`
 *   or `…/settings` / `…/queues/{branch}/settings` (web/paths.ts, repoTargets).
 * - `GET /{org}/flaky-tests/test/{id}`: the link trunk-analytics-cli prints for a test.
 * - `GET` or `POST /{org}/webhooks` (list, create) and `POST /{org}/webhooks/{id}/delete`.
 *
 * HEAD is asked as GET. `/`, `/login`, `/logout` and `/assets/app.css` are routes of their own.
 */
export function isDashboardPage(method: string, rawUrl: string): boolean {
  const segments = pathSegments(rawUrl);
  if (segments === undefined) return false;
  const [org = '', section, ...rest] = segments;
  const slug = org.toLowerCase();
  if (slug === 'v1' || !ORG_SLUG_PATTERN.test(slug)) return false;
  const read = method === 'GET' || method === 'HEAD';
  if (section === undefined) return read;
  if (section === 'repos') {
    if (!read && method !== 'POST') return false;
    return repoTargets(rest).some(({ route }) =>
      route.page === 'settings' || route.page === 'queue-settings'
        ? read || method === 'POST'
        : (route.page === 'test-action') !== read,
    );
  }
  if (section === 'flaky-tests') return read && rest.length === 2 && rest[0] === 'test';
  if (section === 'webhooks') {
    if (rest.length === 0) return read || method === 'POST';
    return method === 'POST' && rest.length === 2 && rest[1] === 'delete';
  }
  return false;
}
