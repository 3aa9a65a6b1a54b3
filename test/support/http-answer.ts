// Requests sent with node:http exactly as a client under test sends them (its own headers, its own
// agent or none, a body written in pieces), and the whole answer read back as text.
import http from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

/** The whole answer to `request`, its body as UTF-8 text; rejects on an error of the request. */
export function answerOf(request: http.ClientRequest): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    request.on('error', reject);
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
  });
}

/** Sends one request as `options` say, with `body` whole, and reads its answer. */
export function sendRequest(options: http.RequestOptions, body: string | Buffer): Promise<HttpAnswer> {
  const request = http.request(options);
  const answer = answerOf(request);
  request.end(body);
  return answer;
}
