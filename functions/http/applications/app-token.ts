import { getAuthorization, lookupToken } from '#data/authorizations';
import { getUser } from '#data/users';
import type { OAuthApp } from '#domain/apps';
import type { Authorization } from '#domain/authorizations';
import { hashToken, hasValidChecksum } from '#domain/tokens';
import type { User } from '#domain/users';
import type { Caller } from '#shared/authenticate';
import { notFound } from '#shared/errors';

export interface AppToken {
  readonly app: OAuthApp;
  readonly authorization: Authorization;
  readonly user: User;
}

/**
 * The authorization behind `:access_token`, when it belongs to the authenticated application named
 * in the path; 404 for anything else (an invalid token, another app's token, a path/credential
 * mismatch), as GitHub answers. Counting nothing towards the failed-login limit is the point of
 * these endpoints.
 */
export async function appToken(caller: Caller, params: Readonly<Record<string, string>>): Promise<AppToken> {
  const token = params.access_token ?? '';
  if (caller.kind !== 'app' || caller.app.clientId !== params.client_id || !hasValidChecksum(token))
    throw notFound();
  const lookup = await lookupToken(hashToken(token));
  if (!lookup || lookup.clientId !== caller.app.clientId) throw notFound();
  const [authorization, user] = await Promise.all([
    getAuthorization(lookup.login, lookup.authorizationId),
    getUser(lookup.login),
  ]);
  if (!authorization || !user) throw notFound();
  return { app: caller.app, authorization, user };
}

export const directoryOf = (app: OAuthApp) => new Map([[app.clientId, app]]);
