/**
 * Token revocation (RFC 7009) and introspection (RFC 7662) for an OAuth application's own tokens.
 * The client's credentials and the token are read in one strongly consistent round trip (the
 * application and the token's lookup item in one BatchGetItem), as the application-side check
 * endpoint does. A token that is not the authenticated application's own is, to that client,
 * indistinguishable from one that does not exist.
 */
import { getApp, type StoredApp } from '#data/apps';
import { deleteAuthorization, getAppAndToken, type TokenLookup } from '#data/authorizations';
import { getAppAndRefreshToken, type StoredRefreshToken } from '#data/refresh-tokens';
import { secretMatches } from '#domain/apps';
import { isExpired } from '#domain/authorizations';
import { OAuthError } from '#domain/oauth-errors';
import type { Scope } from '#domain/scopes';
import { hashToken, hasValidChecksum, isWellFormedRefreshToken } from '#domain/tokens';
import { matchesParamRule } from '#shared/validate';
import { revokeAppToken } from './app-tokens.ts';

/** As the request presented them: HTTP Basic, or `client_id` and `client_secret` in the body. */
export interface ClientCredentials {
  readonly id: string | undefined;
  readonly secret: string | undefined;
}

/**
 * A token of the authenticated client's application, by kind. Every kind of token a client can
 * revoke or introspect is a member here; `ownToken` finds it and `revokeOwn` deletes it.
 */
type OwnToken =
  | { readonly kind: 'access'; readonly lookup: TokenLookup }
  | { readonly kind: 'refresh'; readonly refresh: StoredRefreshToken };

/** RFC 6749 §5.2: unknown client, wrong secret, or no credentials at all. */
const invalidClient = () => new OAuthError('invalid_client', 401);

/** `token` is required (RFC 7009 §2.1, RFC 7662 §2.1). */
const missingToken = () => new OAuthError('invalid_request', 400, 'The token parameter is missing.');

/**
 * Authenticates the client and finds `token` among its application's tokens, in one round trip.
 * A suspended application still authenticates here: it may revoke its tokens, and introspection
 * reports them inactive (they authenticate nothing while it is suspended).
 */
async function ownToken(
  client: ClientCredentials,
  token: string,
): Promise<{ readonly app: StoredApp; readonly own?: OwnToken }> {
  const { id, secret } = client;
  // A client_id of the wrong shape names no application: no read (and no over-long key).
  if (!id || !secret || !matchesParamRule('client_id', id)) throw invalidClient();
  // Only well-formed tokens cost a read; a look-alike is known not to exist.
  if (isWellFormedRefreshToken(token)) {
    const found = await getAppAndRefreshToken(id, hashToken(token));
    const app = authenticated(found.app, secret);
    const refresh = found.refresh;
    // Another application's, or expired (a refresh would refuse it too): not a token of this client.
    const live = refresh && refresh.clientId === app.clientId && refresh.expiresAt > Date.now() / 1000;
    return live ? { app, own: { kind: 'refresh', refresh } } : { app };
  }
  const found = hasValidChecksum(token)
    ? await getAppAndToken(id, hashToken(token))
    : { app: await getApp(id), token: undefined };
  const app = authenticated(found.app, secret);
  const lookup = found.token;
  // A personal access token has no client id; another application's token has another.
  if (!lookup || lookup.clientId !== app.clientId) return { app };
  return { app, own: { kind: 'access', lookup } };
}

function authenticated(app: StoredApp | undefined, secret: string): StoredApp {
  if (!app || !secretMatches(secret, app.secretHash)) throw invalidClient();
  return app;
}

async function revokeOwn(own: OwnToken): Promise<void> {
  switch (own.kind) {
    case 'access':
      // Exactly what `DELETE /applications/{client_id}/token` does.
      return revokeAppToken({ authorization: own.lookup.authorization });
    case 'refresh':
      // RFC 7009 §2.1: revoking a refresh token revokes its grant's access tokens too: the whole
      // family (its authorization), whether the token presented is the current one or a spent one.
      await deleteAuthorization(own.refresh.login, own.refresh.authorizationId);
      return;
  }
}

/**
 * `POST /login/oauth/revoke`: deletes `token` when it is the client's own: an access token, or a
 * refresh token (with its family); anything else (unknown, malformed, expired, another
 * application's, a personal access token) changes nothing and succeeds alike, RFC 7009 §2.2.
 * `token_type_hint` is not taken: the token's own prefix says what it is (§2.1 allows ignoring
 * the hint).
 */
export async function revokeToken(client: ClientCredentials, token: string | undefined): Promise<void> {
  const { own } = await ownToken(client, token ?? '');
  if (!token) throw missingToken();
  if (own) await revokeOwn(own);
}

/** What introspection tells the token's own application about an active token. */
export interface ActiveToken {
  readonly scopes: readonly Scope[];
  readonly clientId: string;
  readonly login: string;
  /** When the token's authorization was created (ISO 8601). */
  readonly issuedAt: string;
  /** When the token expires (ISO 8601), for an application with expiring user tokens; else null. */
  readonly expiresAt: string | null;
}

/**
 * `POST /login/oauth/introspect`: the client's own access token while it authenticates requests,
 * else undefined (`{"active": false}`), whatever the reason (RFC 7662 §2.2 leaves no room to
 * say). A refresh token authenticates no request, so it is never active here.
 */
export async function introspectToken(
  client: ClientCredentials,
  token: string | undefined,
): Promise<ActiveToken | undefined> {
  const { app, own } = await ownToken(client, token ?? '');
  if (!token) throw missingToken();
  if (own?.kind !== 'access' || app.suspended || isExpired(own.lookup.authorization, Date.now()))
    return undefined;
  const { authorization } = own.lookup;
  return {
    scopes: authorization.scopes,
    clientId: authorization.clientId,
    login: authorization.login,
    issuedAt: authorization.createdAt,
    expiresAt: authorization.expiresAt,
  };
}
