// The access log of a real server process at LOG_LEVEL=info: one line per request, written
// asynchronously (so the test waits for it to arrive through the pipe).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../src/app/tokens.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type RunningServer, startServerProcess } from '../support/process.ts';

async function until(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('access log', () => {
  let db: TestDatabase;
  let server: RunningServer;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    token = (await createToken(db.database.db, { orgSlug: 'acme', name: 'ci', now: Date.now() })).token;
    server = await startServerProcess({
      ...db.env,
      MAINLINE_QUEUE_POLL_MS: '0',
      MAINLINE_WEBHOOK_POLL_MS: '0',
    });
  });
  afterAll(async () => {
    await server?.stop();
    await db?.cleanup();
  });

  it('logs each request once, when answered, with what an access log needs', async () => {
    const ids = ['access-log-probe-1', 'access-log-probe-2'];
    for (const id of ids) {
      const res = await fetch(`${server.url}/v1/repositories/get?x=1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-token': token, 'x-request-id': id },
        body: JSON.stringify({ repo: { host: 'github.com', owner: 'acme', name: 'web' } }),
      });
      expect(res.status).toBe(404);
    }
    for (const id of ids) {
      await until(`the log line of ${id}`, () => server.logs.some((l) => l.includes(`"${id}"`)));
      const lines = server.logs.filter((l) => l.includes(`"${id}"`)).map((l) => JSON.parse(l));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        level: 30,
        reqId: id,
        msg: 'request completed',
        req: { method: 'POST', url: '/v1/repositories/get?x=1', remoteAddress: '127.0.0.1' },
        res: { statusCode: 404 },
      });
      expect(typeof lines[0].responseTime).toBe('number');
      expect(JSON.stringify(lines[0])).not.toContain(token);
    }
  });
});
