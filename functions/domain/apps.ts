import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Scope } from './scopes.ts';

/** An OAuth application registered with the service. */
export interface OAuthApp {
  readonly id: number;
  readonly clientId: string;
  readonly name: string;
  readonly url: string;
  readonly callbackUrl: string;
  readonly ownerLogin: string;
  readonly suspended: boolean;
  /**
   * "Expire user authorization tokens" (off by default): tokens issued to the app for its users
   * expire and come with a refresh token. Changing it leaves tokens already issued as they are.
   */
  readonly expireUserTokens: boolean;
  /** The device authorization grant (RFC 8628) is off until the owner enables it, as on GitHub. */
  readonly deviceFlowEnabled: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
  /**
   * How the client came to be known here: registered by a person (`registered`, GitHub's OAuth
   * apps), named by its metadata document's URL (`metadata-document`, the client id is that URL)
   * or registered by itself (`dynamic`, RFC 7591). The last two are public clients: no secret,
   * PKCE S256 required, their redirect URIs listed in `redirectUris`.
   */
  readonly clientType: ClientType;
  /** A public client's redirect URIs, matched exactly (loopback ports aside); empty for registered apps. */
  readonly redirectUris: readonly string[];
  /** Epoch seconds after which a dynamically registered client is gone; null: never. */
  readonly clientExpiresAt: number | null;
  /** Epoch seconds until which a metadata document client's stored document is fresh; null for others. */
  readonly documentExpiresAt: number | null;
}

export type ClientType = 'registered' | 'metadata-document' | 'dynamic';

/** A client without a secret: it proves nothing but PKCE, and only the grants that allow that serve it. */
export const isPublicClient = (app: Pick<OAuthApp, 'clientType'>): boolean => app.clientType !== 'registered';

/** A dynamically registered client past its lifetime is treated as unknown. */
export const isLapsed = (app: Pick<OAuthApp, 'clientExpiresAt'>, nowSeconds: number): boolean =>
  app.clientExpiresAt !== null && app.clientExpiresAt <= nowSeconds;

/** 20 characters, as GitHub's client ids. */
export const newClientId = (): string => randomBytes(10).toString('hex');

/** 40 characters, as GitHub's client secrets; shown once, stored only as a hash. */
export const newClientSecret = (): string => randomBytes(20).toString('hex');

/**
 * A client secret an administrator gives for a well-known client (gh's is 40 hex characters, in
 * its source): printable ASCII without spaces, 8 to 255 characters.
 */
export const isAcceptableClientSecret = (secret: string): boolean => /^[\x21-\x7e]{8,255}$/.test(secret);

/** Secrets are 160 random bits, so a fast hash is enough (no dictionary to attack). */
export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

export function secretMatches(secret: string, storedHash: string): boolean {
  const actual = Buffer.from(hashSecret(secret), 'hex');
  const expected = Buffer.from(storedHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Homepage and callback URLs must be absolute http(s) URLs without credentials or fragments. */
export function isAcceptableAppUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password && !url.hash
    );
  } catch {
    return false;
  }
}

/** An application as the owner's list shows it. */
export interface OwnedApp {
  readonly clientId: string;
  readonly name: string;
  readonly suspended: boolean;
  readonly createdAt: string;
}

/** One token an application holds, as its owner may see it (never the token or its hash). */
export interface AppTokenSummary {
  readonly id: number;
  readonly login: string;
  readonly scopes: readonly Scope[];
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
}
