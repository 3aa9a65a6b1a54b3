// The JSON of recent answers of a read route, by a key that names one exact answer (the app layer
// makes it from everything the answer depends on, the repository's health_version among them).
// Serializing a page of 100 records was most of a repeated page's time and garbage, and the
// collection pauses it caused showed in the p99.
import type { FastifyReply } from 'fastify';
import { Lru } from '../app/lru.ts';

/** Answers kept per route: up to ~100 KB of JSON each. */
const MAX_ANSWERS = 64;

export class AnswerCache {
  readonly #answers = new Lru<string>(MAX_ANSWERS);

  /**
   * Sends the answer named `key`: its kept JSON, or `answer()` serialized by the route's own
   * serializer (its response schema, as Fastify would have used) and kept.
   */
  async send(reply: FastifyReply, key: string, answer: () => Promise<unknown>): Promise<FastifyReply> {
    let json = this.#answers.get(key);
    if (json === undefined) {
      json = reply.serialize(await answer()) as string;
      this.#answers.set(key, json);
    }
    // A string is sent as it is: Fastify serializes objects only.
    return reply.type('application/json; charset=utf-8').send(json);
  }
}
