/**
 * Token revocation (RFC 7009) and introspection (RFC 7662) for an OAuth application's own tokens.
 * The client's credentials and the token are read in one strongly consistent round trip (the
 * application and the token's lookup item in one BatchGetItem), as the application-side check
 * endpoint does. A token that is not the authenticated application's own is, to that client,
 * indistinguishable from one that does not exist.
 */
import { getApp, type StoredApp } from '#data/apps';
import { getAppAndToken, type TokenLookup } from '#data/authorizations';
import { secretMatches } from '#domain/apps';
import { isExpired } from '#domain/authorizations';
import { OAuthError } from '#domain/oauth-errors';
import type { Scope } from '#domain/scopes';
import { hashToken, hasValidChecksum } from '#domain/tokens';
import { matchesParamRule } from '#shared/validate';
import { revokeAppToken } from './app-tokens.ts';

/** As the request presented them: HTTP Basic, or `client_id` and `client_secret` in the body. */
export interface ClientCredentials {
  readonly id: string | undefined;
  readonly secret: string | undefined;
}

/**
 * A token of the authenticated client's application, by kind. Every kind of token a client can
 * revoke or introspect is a member here; `ownToken` finds it and `revokeOwn` deletes it, so a
 * second kind (refresh tokens) is one member, one read in `ownToken` and one case in `revokeOwn`.
 */
type OwnToken = { readonly kind: 'access'; readonly lookup: TokenLookup };

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
  const found = hasValidChecksum(token)
    ? await getAppAndToken(id, hashToken(token))
    : { app: await getApp(id), token: undefined };
  if (!found.app || !secretMatches(secret, found.app.secretHash)) throw invalidClient();
  const lookup = found.token;
  // A personal access token has no client id; another application's token has another.
  if (!lookup || lookup.clientId !== found.app.clientId) return { app: found.app };
  return { app: found.app, own: { kind: 'access', lookup } };
}

async function revokeOwn(own: OwnToken): Promise<void> {
  switch (own.kind) {
    case 'access':
      // Exactly what `DELETE /applications/{client_id}/token` does.
      return revokeAppToken({ authorization: own.lookup.authorization });
  }
}

/**
 * `POST /login/oauth/revoke`: deletes `token` when it is the client's own; anything else (unknown,
 * malformed, another application's, a personal access token) changes nothing and succeeds alike,
 * RFC 7009 §2.2. `token_type_hint` is not taken: the token's own form says what it is (§2.1
 * allows ignoring the hint).
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
 * `POST /login/oauth/introspect`: the client's own token while it authenticates requests, else
 * undefined (`{"active": false}`), whatever the reason (RFC 7662 §2.2 leaves no room to say).
 */
export async function introspectToken(
  client: ClientCredentials,
  token: string | undefined,
): Promise<ActiveToken | undefined> {
  const { app, own } = await ownToken(client, token ?? '');
  if (!token) throw missingToken();
  if (!own || app.suspended || isExpired(own.lookup.authorization, Date.now())) return undefined;
  const { authorization } = own.lookup;
  return {
    scopes: authorization.scopes,
    clientId: authorization.clientId,
    login: authorization.login,
    issuedAt: authorization.createdAt,
    expiresAt: authorization.expiresAt,
  };
}
