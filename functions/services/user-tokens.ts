/**
 * User tokens of an application (the web flow's, and any other grant's that issues one to an app
 * for a user), and GitHub's "expiring user tokens": when the application has "expire user
 * authorization tokens" on, the token expires after `USER_TOKEN_SECONDS` (8 hours) and comes with
 * a `ghr_` refresh token good for `REFRESH_TOKEN_SECONDS` (about 6 months). A refresh buys a new
 * access token and a new refresh token for the same authorization; the presented refresh token is
 * spent and the old access token stops working (GitHub: "Once you use a refresh token, that
 * refresh token and the old user access token will no longer work"). Presenting a spent refresh
 * token again revokes the whole family: the authorization, with its newest access token.
 */

import { getApp, type StoredApp } from '#data/apps';
import {
  type CreateResult,
  createAuthorization,
  deleteAuthorization,
  type NewAuthorization,
} from '#data/authorizations';
import { getAppAndRefreshToken, type NewRefreshToken, rotateRefreshToken } from '#data/refresh-tokens';
import { isLapsed } from '#domain/apps';
import { TOKENS_PER_SCOPE_SET } from '#domain/authorizations';
import { isPlausibleClientId } from '#domain/authorize-request';
import { OAuthError } from '#domain/oauth-errors';
import { checkRefreshResource, type ResourceUrls } from '#domain/resources';
import type { Scope } from '#domain/scopes';
import { hashToken, isWellFormedRefreshToken, mintAccessToken, mintRefreshToken } from '#domain/tokens';
import { config } from '#shared/config';
import { checkClient } from './oauth-client.ts';

/** What the token endpoint answers with; the expiry fields only for expiring tokens. */
export interface IssuedToken {
  readonly accessToken: string;
  readonly scopes: readonly Scope[];
  /** Seconds until the access token expires. */
  readonly expiresIn?: number;
  readonly refreshToken?: string;
  /** Seconds until the refresh token expires. */
  readonly refreshTokenExpiresIn?: number;
}

/** A user token minted but not stored yet: its secrets, and its expiry when the app wants one. */
export interface PendingUserToken {
  readonly token: string;
  readonly tokenHash: string;
  readonly tokenLastEight: string;
  /** ISO 8601, or null for a token that does not expire. */
  readonly expiresAt: string | null;
  readonly refresh?: NewRefreshToken & { readonly token: string };
}

const epochSeconds = (ms: number): number => Math.floor(ms / 1000);
/** ISO 8601 without fractional seconds, as every timestamp of the API. */
const isoSeconds = (seconds: number): string => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

function refreshFor(now: number, publicClient: boolean): NewRefreshToken & { readonly token: string } {
  const { token, tokenHash } = mintRefreshToken();
  return { token, tokenHash, expiresAt: epochSeconds(now) + config().refreshTokenSeconds, publicClient };
}

/** How a grant got its user token. */
export interface UserTokenGrant {
  /**
   * A public client's grant (the device flow: client_id, no secret). Its refresh tokens are then
   * refreshed with client_id alone, as GitHub allows for device-flow tokens.
   */
  readonly publicClient: boolean;
}

/**
 * Mints a user token for `app` under the app's current setting. Every grant that issues a user
 * token calls this, then `storeUserToken`, so that the setting means the same for all of them.
 */
export function newUserToken(
  app: Pick<StoredApp, 'clientId' | 'expireUserTokens'>,
  grant: UserTokenGrant,
  now = Date.now(),
): PendingUserToken {
  const minted = mintAccessToken(app.clientId);
  if (!app.expireUserTokens) return { ...minted, expiresAt: null };
  return {
    ...minted,
    expiresAt: isoSeconds(epochSeconds(now) + config().userTokenSeconds),
    refresh: refreshFor(now, grant.publicClient),
  };
}

export interface UserTokenOwner {
  readonly login: string;
  readonly clientId: string;
  readonly scopes: readonly Scope[];
  /** Create only while the user's grant is at this generation (a code's); see createAuthorization. */
  readonly grantGeneration?: number;
  /** A write that commits with the token or not at all (a code's claim); see createAuthorization. */
  readonly claim?: NewAuthorization['claim'];
  /** The protected resource the token is for (RFC 8707); null or absent: the REST API. */
  readonly resource?: string | null;
}

const withoutSecret = ({ tokenHash, expiresAt, publicClient }: NewRefreshToken): NewRefreshToken => ({
  tokenHash,
  expiresAt,
  publicClient,
});

/** Stores a pending user token (and its refresh token) as a new authorization of the app, in one transaction. */
export function storeUserToken(pending: PendingUserToken, owner: UserTokenOwner): Promise<CreateResult> {
  return createAuthorization({
    login: owner.login,
    clientId: owner.clientId,
    scopes: owner.scopes,
    note: null,
    noteUrl: null,
    fingerprint: null,
    tokenHash: pending.tokenHash,
    tokenLastEight: pending.tokenLastEight,
    expiresAt: pending.expiresAt,
    ...(pending.refresh ? { refresh: withoutSecret(pending.refresh) } : {}),
    claimFingerprint: false,
    ...(owner.grantGeneration !== undefined ? { grantGeneration: owner.grantGeneration } : {}),
    ...(owner.claim ? { claim: owner.claim } : {}),
    ...(owner.resource ? { resource: owner.resource } : {}),
    limit: TOKENS_PER_SCOPE_SET,
  });
}

/**
 * The answer for a pending token just stored: its lifetimes are the configured ones exactly (both
 * expiries were counted from the same whole second).
 */
export function issuedToken(pending: PendingUserToken, scopes: readonly Scope[]): IssuedToken {
  if (pending.expiresAt === null || !pending.refresh) return { accessToken: pending.token, scopes };
  return {
    accessToken: pending.token,
    scopes,
    expiresIn: config().userTokenSeconds,
    refreshToken: pending.refresh.token,
    refreshTokenExpiresIn: config().refreshTokenSeconds,
  };
}

export interface RefreshInput {
  readonly clientId: string | undefined;
  readonly clientSecret: string | undefined;
  readonly refreshToken: string | undefined;
  /** Every `resource` parameter sent: none, or the grant's own (RFC 8707 §2.2). */
  readonly resources?: readonly string[];
  readonly urls?: ResourceUrls;
}

/**
 * `grant_type=refresh_token`. The client first: a wrong secret, or none for a family that did not
 * begin with the device flow → `incorrect_client_credentials` (so a party without the secret can
 * neither spend nor burn a web-flow family). Then the refresh token: unknown, malformed, another
 * application's, expired, or no longer its authorization's current one → `bad_refresh_token`;
 * already spent (a reuse, or the loser of two concurrent refreshes) → the family is revoked, then
 * `bad_refresh_token`. Otherwise the authorization moves to a new access token and a new refresh
 * token (always expiring: the family keeps the terms it was issued under, whatever the app's
 * setting is now). The application and the refresh token are one read.
 */
export async function refreshUserToken(input: RefreshInput): Promise<IssuedToken> {
  const { clientId, clientSecret, refreshToken } = input;
  if (!clientId || !isPlausibleClientId(clientId)) throw new OAuthError('incorrect_client_credentials');
  const refreshHash =
    refreshToken && isWellFormedRefreshToken(refreshToken) ? hashToken(refreshToken) : undefined;
  const found = refreshHash
    ? await getAppAndRefreshToken(clientId, refreshHash)
    : { app: await getApp(clientId), refresh: undefined };
  // Another app's refresh token is as good as unknown (and is not counted as a reuse).
  const stored = found.refresh && found.refresh.clientId === clientId ? found.refresh : undefined;
  const secretless = !clientSecret && (stored === undefined || stored.publicClient);
  const now = Date.now();
  // A dynamically registered client past its lifetime is unknown.
  const app = found.app && !isLapsed(found.app, epochSeconds(now)) ? found.app : undefined;
  checkClient(app, clientSecret || (secretless ? null : undefined));
  const bad = () => new OAuthError('bad_refresh_token');
  if (!stored) throw bad();
  if (stored.expiresAt <= epochSeconds(now)) throw bad();
  if (input.urls) {
    const resource = checkRefreshResource(input.resources ?? [], stored.resource, input.urls);
    if (!resource.ok) throw new OAuthError('invalid_target', 400, resource.reason);
  }
  if (stored.usedAt !== null) {
    await deleteAuthorization(stored.login, stored.authorizationId);
    throw bad();
  }
  const pending = newUserToken(
    { clientId, expireUserTokens: true },
    { publicClient: stored.publicClient },
    now,
  );
  const refresh = pending.refresh ?? refreshFor(now, stored.publicClient);
  const rotated = await rotateRefreshToken(stored, {
    tokenHash: pending.tokenHash,
    tokenLastEight: pending.tokenLastEight,
    expiresAt: pending.expiresAt ?? '',
    refresh: withoutSecret(refresh),
  });
  if (rotated.kind === 'reused') {
    await deleteAuthorization(stored.login, stored.authorizationId);
    throw bad();
  }
  if (rotated.kind === 'gone') throw bad();
  return issuedToken(pending, rotated.authorization.scopes);
}
