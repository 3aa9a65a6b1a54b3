import type { Static } from 'typebox';
import { listUnhealthyTests } from '../../../app/health/read.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { ListUnhealthyBody, UnhealthyPage } from '../../schemas/flaky.ts';
import type { Api, RouteDeps } from '../../types.ts';

/** Answers kept: up to ~100 KB of JSON each. */
const MAX_ANSWERS = 64;

/**
 * The JSON of recent answers by their key (listUnhealthyTests: one key, one answer). Serializing a
 * page of 100 records was most of a repeated page's time and garbage (collection pauses in the p99).
 */
class AnswerCache {
  readonly #answers = new Map<string, string>();

  get(key: string): string | undefined {
    const json = this.#answers.get(key);
    if (json !== undefined) {
      this.#answers.delete(key);
      this.#answers.set(key, json);
    }
    return json;
  }

  set(key: string, json: string): void {
    this.#answers.set(key, json);
    if (this.#answers.size > MAX_ANSWERS) this.#answers.delete(this.#answers.keys().next().value as string);
  }
}

export function registerListUnhealthy(app: Api, { ctx, pageTokens }: RouteDeps): void {
  const answers = new AnswerCache();
  app.post(
    '/flaky-tests/list-unhealthy-tests',
    {
      schema: {
        tags: ['flaky tests'],
        summary: 'A page of the repository’s FLAKY or BROKEN tests, most PRs impacted first',
        body: ListUnhealthyBody,
        response: { 200: UnhealthyPage, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { answer, key } = await listUnhealthyTests(ctx, callerOf(request), pageTokens, request.body);
      let json = answers.get(key);
      if (json === undefined) {
        const checked: Static<typeof UnhealthyPage> = answer;
        // The route's own serializer (its response schema), as Fastify would have used.
        json = reply.serialize(checked) as string;
        answers.set(key, json);
      }
      // A string is sent as it is (Fastify serializes objects only); the types only know objects.
      return reply
        .type('application/json; charset=utf-8')
        .send(json as unknown as Static<typeof UnhealthyPage>);
    },
  );
}
