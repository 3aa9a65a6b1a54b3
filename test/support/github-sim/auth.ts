import {
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
  verify,
} from 'node:crypto';
import { HttpError } from './http.ts';
import type { SimulatorAppOptions } from './types.ts';

export interface AppKeyPair {
  /** PKCS#8 PEM ("BEGIN PRIVATE KEY"), what GitHub's downloads are converted to and auth-app prefers. */
  privateKey: string;
  /** The same key as PKCS#1 PEM ("BEGIN RSA PRIVATE KEY"), the format GitHub hands out. */
  privateKeyPkcs1: string;
  /** SPKI PEM. */
  publicKey: string;
}

/** A fresh RSA-2048 key pair for a simulated GitHub App. */
export function generateAppKeyPair(): AppKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    privateKeyPkcs1: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** Who made a REST call. */
export interface Actor {
  login: string;
  type: 'User' | 'Bot';
  /** The app acting, for installation tokens. */
  appId: number | null;
  /** Installation tokens are limited to their installation's account. */
  installationOwner: string | null;
}

interface InstallationToken {
  installationId: number;
  owner: string;
  expiresAt: number;
}

/** The credentials the simulator accepts: a PAT, app JWTs, and the installation tokens they mint. */
export class Credentials {
  readonly #app: (SimulatorAppOptions & { key: KeyObject; slug: string }) | null;
  readonly #token: string | null;
  readonly #tokenLogin: string;
  readonly #ttlSeconds: number;
  readonly #issued = new Map<string, InstallationToken>();
  /** Lower-cased account → its installation. */
  readonly #installations = new Map<string, { id: number; owner: string }>();
  #nextInstallation = 1000;

  constructor(opts: {
    app?: SimulatorAppOptions;
    token?: string;
    tokenLogin?: string;
    installationTokenTtlSeconds?: number;
  }) {
    this.#token = opts.token ?? null;
    this.#tokenLogin = opts.tokenLogin ?? 'mainline-bot';
    this.#ttlSeconds = opts.installationTokenTtlSeconds ?? 3600;
    if (opts.app) {
      const source = opts.app.publicKey ?? opts.app.privateKey;
      if (source === undefined) throw new Error('app needs publicKey or privateKey');
      const key = typeof source === 'string' ? createPublicKey(source) : source;
      this.#app = { ...opts.app, key, slug: opts.app.slug ?? 'mainline' };
    } else {
      this.#app = null;
    }
  }

  get app(): { id: number; slug: string } | null {
    return this.#app ? { id: this.#app.id, slug: this.#app.slug } : null;
  }

  get required(): boolean {
    return this.#app !== null || this.#token !== null;
  }

  /** The installation of the app on an account (every account has one). */
  installationId(owner: string): number {
    const key = owner.toLowerCase();
    let installation = this.#installations.get(key);
    if (installation === undefined) {
      installation = { id: this.#nextInstallation++, owner };
      this.#installations.set(key, installation);
    }
    return installation.id;
  }

  /** The account an installation belongs to, or null. */
  installationOwner(id: number): string | null {
    for (const installation of this.#installations.values())
      if (installation.id === id) return installation.owner;
    return null;
  }

  /** Identity of a REST call to a repository endpoint (401 without acceptable credentials). */
  repoCaller(header: string | undefined): Actor {
    const anonymous: Actor = { login: this.#tokenLogin, type: 'User', appId: null, installationOwner: null };
    const token = bearer(header);
    if (!this.required) return anonymous;
    if (token === null) throw new HttpError(401, 'Requires authentication');
    if (this.#token !== null && safeEqual(token, this.#token)) return anonymous;
    const issued = this.#issued.get(token);
    if (issued && issued.expiresAt > Date.now() && this.#app) {
      return {
        login: `${this.#app.slug}[bot]`,
        type: 'Bot',
        appId: this.#app.id,
        installationOwner: issued.owner,
      };
    }
    throw new HttpError(401, 'Bad credentials');
  }

  /** Check the JWT of an app endpoint call: RS256 over the app's key, iss = app id, not expired. */
  appCaller(header: string | undefined): void {
    const app = this.#app;
    if (app === null) throw new HttpError(404, 'Not Found');
    const token = bearer(header);
    if (token === null) throw new HttpError(401, 'A JSON web token could not be decoded');
    const parts = token.split('.');
    const [head, body, signature] = parts;
    if (parts.length !== 3 || head === undefined || body === undefined || signature === undefined) {
      throw new HttpError(401, 'A JSON web token could not be decoded');
    }
    const header64 = decodeJson(head);
    const claims = decodeJson(body);
    if (header64?.['alg'] !== 'RS256' || claims === null) {
      throw new HttpError(401, 'A JSON web token could not be decoded');
    }
    const ok = verify(
      'RSA-SHA256',
      Buffer.from(`${head}.${body}`),
      app.key,
      Buffer.from(signature, 'base64url'),
    );
    if (!ok) throw new HttpError(401, 'A JSON web token could not be decoded');
    if (String(claims['iss']) !== String(app.id)) {
      throw new HttpError(401, "'Issuer' claim ('iss') must be an Integer");
    }
    const now = Math.floor(Date.now() / 1000);
    const exp = claims['exp'];
    const iat = claims['iat'];
    if (typeof exp !== 'number' || exp <= now) {
      throw new HttpError(
        401,
        "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
      );
    }
    if (typeof iat !== 'number' || iat > now + 60) {
      throw new HttpError(
        401,
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
      );
    }
    if (exp - iat > 660) throw new HttpError(401, "'Expiration time' claim ('exp') is too far in the future");
  }

  /** Mint an installation token (after appCaller accepted the JWT). */
  issue(installationId: number): { token: string; expiresAt: string } {
    const owner = this.installationOwner(installationId);
    if (owner === null) throw new HttpError(404, 'Not Found');
    const token = `ghs_${randomBytes(18).toString('hex')}`;
    const expiresAt = Date.now() + this.#ttlSeconds * 1000;
    this.#issued.set(token, { installationId, owner, expiresAt });
    return { token, expiresAt: new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }

  /** Make every installation token issued so far invalid (as if expired). */
  expireInstallationTokens(): void {
    for (const issued of this.#issued.values()) issued.expiresAt = 0;
  }
}

/** The token of `authorization: token X` or `Bearer X` (any case). */
function bearer(header: string | undefined): string | null {
  const match = /^(?:token|bearer)\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1] ?? null;
}

function decodeJson(part: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
