import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify } from '@octokit/webhooks-methods';

/** One webhook POST as a receiver saw it. */
export interface ReceivedWebhook {
  event: string;
  id: string;
  signature: string;
  body: string;
  /** The signature verified against the secret (with @octokit/webhooks-methods). */
  valid: boolean;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  close(): Promise<void>;
}

/**
 * A stand-in for Mainline's webhook endpoint, on loopback: records each POST and answers 202, or 401 when
 * the x-hub-signature-256 does not verify.
 */
export async function startWebhookReceiver(secret: string): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const signature = String(req.headers['x-hub-signature-256'] ?? '');
      const valid = await verify(secret, body, signature).catch(() => false);
      const event = String(req.headers['x-github-event']);
      received.push({ event, id: String(req.headers['x-github-delivery']), signature, body, valid });
      res.writeHead(valid ? 202 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/github`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
