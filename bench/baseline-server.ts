// The baselines of the read benchmarks: a bare Fastify server (same version as the service, no
// plugins, no logging), started as a child process by bench/server.ts; listens on HOST:PORT.
// - POST /baseline parses a small JSON body and answers a small JSON object.
// - With BENCH_ANSWERS (a JSON file of captured answers, see bench/same-bytes.ts), every captured
//   path answers from memory the very bytes the real server gave for the same request body: the
//   limit for a read, since it pays only HTTP, parsing the request (JSON bodies are parsed) and
//   writing the bytes.
import fs from 'node:fs';
import Fastify from 'fastify';
import { answerKey, type CapturedAnswer } from './same-bytes.ts';

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/baseline', async (request) => ({
  ok: true,
  echo: typeof request.body === 'object' && request.body !== null ? Object.keys(request.body).length : 0,
  name: 'baseline',
}));

const answersFile = process.env['BENCH_ANSWERS'];
if (answersFile !== undefined && answersFile !== '') {
  const captured = JSON.parse(fs.readFileSync(answersFile, 'utf8')) as CapturedAnswer[];
  const answers = new Map(
    captured.map((a) => [
      answerKey(a.method, a.path, a.body),
      { status: a.status, type: a.contentType, bytes: Buffer.from(a.base64, 'base64') },
    ]),
  );
  // The raw body is kept for the lookup; it is parsed all the same, as the service parses it.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      JSON.parse(body as string);
      done(null, body);
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  const routes = new Set(captured.map((a) => `${a.method} ${a.path}`));
  for (const route of routes) {
    const [method, url] = route.split(' ') as ['GET' | 'POST', string];
    app.route({
      method,
      url,
      handler: async (request, reply) => {
        const body = typeof request.body === 'string' ? request.body : '';
        const answer = answers.get(answerKey(method, url, body));
        if (answer === undefined) return reply.code(404).send({ error: 'no captured answer for this body' });
        return reply.code(answer.status).type(answer.type).send(answer.bytes);
      },
    });
  }
}

await app.listen({ host: process.env['HOST'] ?? '127.0.0.1', port: Number(process.env['PORT'] ?? 0) });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    app.close().then(() => process.exit(0));
  });
}
