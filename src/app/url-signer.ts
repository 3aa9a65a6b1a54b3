import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signs URLs this server hands out for later unauthenticated use (the bundle upload URL, like a
 * presigned S3 URL): HMAC-SHA256 over the purpose, the id and the expiry, keyed by an installation secret.
 */
export class UrlSigner {
  readonly #secret: Buffer;

  constructor(secret: string) {
    this.#secret = Buffer.from(secret, 'base64url');
  }

  sign(purpose: string, id: string, expiresAt: number): string {
    return createHmac('sha256', this.#secret).update(`${purpose}\n${id}\n${expiresAt}`).digest('base64url');
  }

  verify(purpose: string, id: string, expiresAt: number, signature: string): boolean {
    const expected = Buffer.from(this.sign(purpose, id, expiresAt));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}
