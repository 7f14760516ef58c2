import { getApp, type StoredApp } from '#data/apps';
import { secretMatches } from '#domain/apps';
import { isPlausibleClientId } from '#domain/authorize-request';
import { OAuthError } from '#domain/oauth-errors';

const incorrectClient = () => new OAuthError('incorrect_client_credentials');

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

/**
 * The token endpoint's client authentication with a secret: the application by its client_id and
 * secret. Checked before any code is looked at, so a party without the secret can neither probe
 * nor spend codes.
 */
export async function authenticateClient(
  clientId: string | undefined,
  secret: string | undefined,
): Promise<StoredApp> {
  const app = clientId && secret && isPlausibleClientId(clientId) ? await getApp(clientId) : undefined;
  return checkClient(app, secret || undefined);
}
