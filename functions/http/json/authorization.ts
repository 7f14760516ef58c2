import type { OAuthApp } from '#domain/apps';
import { type Authorization, type Grant, isPersonal, PERSONAL_CLIENT_ID } from '#domain/authorizations';
import type { User } from '#domain/users';
import type { PublicUrls } from '#shared/urls';
import { simpleUserJson } from './user.ts';

/** Application name and URL by client_id, for the `app` objects. */
export type AppDirectory = ReadonlyMap<string, Pick<OAuthApp, 'clientId' | 'name' | 'url'>>;

/**
 * The `app` of an authorization. Personal access tokens get GitHub's synthetic application: named
 * after the note, pointing at the note URL (or the authorizations docs), client_id all zeros.
 */
function appJson(authorization: Authorization, apps: AppDirectory, docsUrl: string) {
  if (isPersonal(authorization)) {
    return {
      name: authorization.note ?? '',
      url: authorization.noteUrl ?? `${docsUrl}/oauth-authorizations`,
      client_id: PERSONAL_CLIENT_ID,
    };
  }
  const app = apps.get(authorization.clientId);
  return { name: app?.name ?? '', url: app?.url ?? '', client_id: authorization.clientId };
}

/**
 * GitHub's Authorization shape, fields in GitHub's order. `token` is the full token only where the
 * spec returns it (create, new get-or-create, check, reset) and `""` everywhere else.
 */
export function authorizationJson(
  authorization: Authorization,
  context: { urls: PublicUrls; apps: AppDirectory; docsUrl: string; token?: string; user?: User },
) {
  return {
    id: authorization.id,
    url: `${context.urls.api}/authorizations/${authorization.id}`,
    app: appJson(authorization, context.apps, context.docsUrl),
    token: context.token ?? '',
    hashed_token: authorization.tokenHash,
    token_last_eight: authorization.tokenLastEight,
    note: authorization.note,
    note_url: authorization.noteUrl,
    created_at: authorization.createdAt,
    updated_at: authorization.updatedAt,
    scopes: authorization.scopes,
    fingerprint: authorization.fingerprint ?? '',
    // Only for expiring tokens (GitHub's newer description has a nullable `expires_at`; leaving it
    // out for the others keeps the 2015 shape that clients of the authorizations API know).
    ...(authorization.expiresAt !== null ? { expires_at: authorization.expiresAt } : {}),
    ...(context.user ? { user: simpleUserJson(context.user, context.urls) } : {}),
  };
}

export function grantJson(grant: Grant, urls: PublicUrls, apps: AppDirectory) {
  const app = apps.get(grant.clientId);
  return {
    id: grant.id,
    url: `${urls.api}/applications/grants/${grant.id}`,
    app: { url: app?.url ?? '', name: app?.name ?? '', client_id: grant.clientId },
    created_at: grant.createdAt,
    updated_at: grant.updatedAt,
    scopes: grant.scopes,
  };
}
