// The baseline of the read benchmarks: a bare Fastify server (same version as the service, no
// plugins, no logging) that parses a small JSON body and answers a small JSON object. Started as a
// child process by bench/server.ts; listens on HOST:PORT.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/baseline', async (request) => ({
  ok: true,
  echo: typeof request.body === 'object' && request.body !== null ? Object.keys(request.body).length : 0,
  name: 'baseline',
}));
await app.listen({ host: process.env['HOST'] ?? '127.0.0.1', port: Number(process.env['PORT'] ?? 0) });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    app.close().then(() => process.exit(0));
  });
}
