import net from 'node:net';
import type { FastifyInstance } from 'fastify';

/** One HTTP/1.1 response as read off a raw socket. */
export interface RawResponse {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Listens on a free loopback port; returns the port. */
export async function listenOnLoopback(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as net.AddressInfo).port;
}

/**
 * Writes bytes exactly as given to the server (for requests no HTTP client would send: oversized
 * headers, a malformed request line, a stalled body) and reads the one response until the server
 * closes the connection, or `timeoutMs` passes.
 */
export function rawRequest(
  port: number,
  data: string,
  options: { timeoutMs?: number; localAddress?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({
      host: '127.0.0.1',
      port,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response within ${options.timeoutMs ?? 10_000} ms`));
    }, options.timeoutMs ?? 10_000);
    socket.on('data', (chunk) => chunks.push(chunk));
    // The server may reset the connection after answering (it still had unread bytes).
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) {
        reject(new Error(`no HTTP response, got ${JSON.stringify(text.slice(0, 200))}`));
        return;
      }
      const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) });
    });
    socket.write(data);
  });
}
