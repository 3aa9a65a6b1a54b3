// The merge-queue calls many queue tests make through the API, for any scenario that posts as a
// client of the organization (GitScenario, GitHubScenario): submit a PR, read a test run's details.
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** A scenario that POSTs JSON to the API with its organization's token. */
export interface PostsToApi {
  post(url: string, body: object): Promise<LightMyRequestResponse>;
}

/** submitPullRequest: PR `n` into `repo`'s `main` queue; expects 200. */
export async function submitPr(s: PostsToApi, repo: object, n: number): Promise<void> {
  const res = await s.post('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: n } });
  expect(res.statusCode, res.body).toBe(200);
}

/** getMergeQueueTestingDetails of a test run of `repo`'s `main` queue; expects 200, the answer. */
export async function testingDetails(s: PostsToApi, repo: object, testRunId: string) {
  const res = await s.post('/v1/getMergeQueueTestingDetails', { repo, targetBranch: 'main', testRunId });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
