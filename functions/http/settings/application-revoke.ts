import { revokeGrant } from '#services/authorizations';
import { grantForApp } from '#services/grants';
import { paths, seeOther, settingsHandler } from './settings-page.ts';

/**
 * POST /settings/connections/applications/:client_id/revoke: exactly what the API's grant
 * deletion does (spec §3.3): the application's tokens for the user and the keys it created go.
 */
export const handler = settingsHandler(paths.applications, async (request, user) => {
  const { app } = await grantForApp(user.login, request.params.client_id);
  await revokeGrant(user.login, app.clientId);
  return seeOther(paths.applications, 'app-revoked');
});
