import type { StoredApp } from '#data/apps';
import { secretMatches } from '#domain/apps';
import { OAuthError } from '#domain/oauth-errors';

/** `incorrect_client_credentials`: the one answer for any wrong or missing client credential. */
export const incorrectClient = () => new OAuthError('incorrect_client_credentials');

/**
 * The token endpoint's client check on an application already read: it exists (by a plausible
 * client_id), the secret is its own (`incorrect_client_credentials` for anything wrong), and it is
 * not suspended (`application_suspended`). `secret: null` is a public client's request (client_id
 * alone), which only the grants that allow one pass (the device flow and its refresh tokens).
 */
export function checkClient(app: StoredApp | undefined, secret: string | null | undefined): StoredApp {
  if (!app || secret === undefined) throw incorrectClient();
  if (secret !== null && !secretMatches(secret, app.secretHash)) throw incorrectClient();
  if (app.suspended) throw new OAuthError('application_suspended');
  return app;
}
