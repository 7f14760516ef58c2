import { getApp, type StoredApp } from '#data/apps';
import { secretMatches } from '#domain/apps';
import { isPlausibleClientId } from '#domain/authorize-request';
import { OAuthError } from '#domain/oauth-errors';

/**
 * The token endpoint's client authentication, for every grant type: the application by its
 * client_id and secret (`incorrect_client_credentials` for anything wrong or missing), and not
 * suspended (`application_suspended`). Checked before any code or refresh token is looked at, so a
 * party without the secret can neither probe nor spend them.
 */
export async function authenticateClient(
  clientId: string | undefined,
  secret: string | undefined,
): Promise<StoredApp> {
  const app = clientId && secret && isPlausibleClientId(clientId) ? await getApp(clientId) : undefined;
  if (!app || !secret || !secretMatches(secret, app.secretHash))
    throw new OAuthError('incorrect_client_credentials');
  if (app.suspended) throw new OAuthError('application_suspended');
  return app;
}
