/**
 * What the application-side token endpoints act on: the authorization behind `:access_token`,
 * when it belongs to the authenticated application named in the path. Counting nothing towards
 * the failed-login limit is the point of these endpoints.
 */
import { getUserRecent } from '#data/users';
import type { OAuthApp } from '#domain/apps';
import { type Authorization, isExpired } from '#domain/authorizations';
import type { User } from '#domain/users';
import { notFound } from '#shared/errors';
import type { Caller } from './authenticate.ts';
import { deleteForUser, resetFor } from './authorizations.ts';

export interface AppToken {
  readonly app: OAuthApp;
  readonly authorization: Authorization;
  readonly user: User;
}

/**
 * The application's token named in the path; 404 for anything else (an invalid or expired token,
 * another app's token, a path/credential mismatch), as GitHub answers.
 */
export async function appToken(caller: Caller, clientId: string | undefined): Promise<AppToken> {
  if (caller.kind !== 'app' || caller.app.clientId !== clientId) throw notFound();
  // Authentication already read the token named in the path, with the application.
  const lookup = caller.token;
  // An expired token is as good as revoked: check, reset and revoke all answer 404.
  if (!lookup || lookup.clientId !== caller.app.clientId || isExpired(lookup.authorization, Date.now()))
    throw notFound();
  // The lookup item carries the authorization; the profile may be up to 10 s old (display only).
  const user = await getUserRecent(lookup.login, 10_000);
  if (!user) throw notFound();
  return { app: caller.app, authorization: lookup.authorization, user };
}

/** A new token for the application's token; the old one fails at once. */
export async function resetAppToken(found: AppToken): Promise<{ found: AppToken; token: string }> {
  const reset = await resetFor(found.authorization);
  if (!reset) throw notFound(); // revoked or reset by someone else meanwhile
  return { found: { ...found, authorization: reset.authorization }, token: reset.token };
}

/** Deletes the token (its authorization); also what `POST /login/oauth/revoke` does to an access token. */
export const revokeAppToken = ({ authorization }: Pick<AppToken, 'authorization'>): Promise<void> =>
  deleteForUser(authorization.login, authorization.id);
