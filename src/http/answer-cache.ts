// Sends a read route's answer from the app's kept answers (app/health/read-answers.ts, one cache per
// route on ctx.caches.answers): the JSON bytes kept under the key, or the answer made, serialized by
// the route's own serializer (its response schema, as Fastify would have used) and kept.
import type { FastifyReply } from 'fastify';
import type { Made, ReadAnswers } from '../app/health/read-answers.ts';

export async function sendKept<T>(
  reply: FastifyReply,
  answers: ReadAnswers,
  answer: { readonly key: string; readonly now: number; readonly make: () => Promise<Made<T>> },
): Promise<FastifyReply> {
  const bytes = await answers.bytes(answer.key, answer.now, answer.make, (value: T) => {
    return reply.serialize(value) as string;
  });
  // Bytes are sent as they are: Fastify serializes objects only.
  return reply.type('application/json; charset=utf-8').send(bytes);
}
