// Repository settings as the tests set them: through the API's update-repository-settings, and the
// monitors more than one test uses.
import type { LightMyRequestResponse } from 'fastify';
import { REPO, type TestApp } from './app.ts';

/** A failure-rate monitor that marks a test failing on 80% of main's runs (3 at least) within 6 hours BROKEN. */
export const BROKEN_ON_MAIN = {
  id: 'broken-on-main',
  name: 'Broken on main',
  detection_type: 'broken',
  activation_threshold: 0.8,
  window_hours: 6,
  min_sample_size: 3,
  branches: ['main'],
} as const;

/** Posts update-repository-settings for REPO of `acme` (or `scope`); the API's answer. */
export const updateRepositorySettings = (
  t: Pick<TestApp, 'post'>,
  token: string,
  settings: Record<string, unknown>,
  scope: { repo: unknown; org_url_slug: string } = { repo: REPO, org_url_slug: 'acme' },
): Promise<LightMyRequestResponse> =>
  t.post('/v1/flaky-tests/update-repository-settings', { ...scope, settings }, token);
