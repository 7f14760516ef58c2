import type { AppToken } from '#services/app-tokens';
import { config } from '#shared/config';
import type { PublicUrls } from '#shared/urls';
import { authorizationJson } from '../json/authorization.ts';

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
