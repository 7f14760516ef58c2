import { getUserRecent } from '#data/users';
import type { OAuthApp } from '#domain/apps';
import type { Authorization } from '#domain/authorizations';
import type { User } from '#domain/users';
import type { Caller } from '#services/authenticate';
import { config } from '#shared/config';
import { notFound } from '#shared/errors';
import type { PublicUrls } from '#shared/urls';
import { authorizationJson } from '../json/authorization.ts';

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
  if (caller.kind !== 'app' || caller.app.clientId !== params.client_id) throw notFound();
  // Authentication already read the token named in the path, with the application.
  const lookup = caller.token;
  if (!lookup || lookup.clientId !== caller.app.clientId) throw notFound();
  // The lookup item carries the authorization; the profile may be up to 10 s old (display only).
  const user = await getUserRecent(lookup.login, 10_000);
  if (!user) throw notFound();
  return { app: caller.app, authorization: lookup.authorization, user };
}

/** The check/reset reply: the authorization with the full token and its user. */
export function appTokenJson({ app, authorization, user }: AppToken, token: string, urls: PublicUrls) {
  return authorizationJson(authorization, {
    urls,
    apps: new Map([[app.clientId, app]]),
    docsUrl: config().docsUrl,
    token,
    user,
  });
}
