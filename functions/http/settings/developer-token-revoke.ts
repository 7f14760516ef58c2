import { isValidLogin } from '#domain/users';
import { ownedApp } from '#services/apps';
import { revokeUserTokenOfApp } from '#services/authorizations';
import { idParam } from '../authorizations/fields.ts';
import { pageNotFound, paths, seeOther, settingsHandler } from './settings-page.ts';

/**
 * POST /settings/developers/:client_id/authorizations/:authorization_id/revoke (form field `login`):
 * the owner revokes one user's token of their application, as the API's revoke-token does. The
 * authorization must be that user's and this application's, else 404.
 */
export const handler = settingsHandler(paths.developers, async (request, user) => {
  const app = await ownedApp(user.login, request.params.client_id);
  const id = idParam(request.params.authorization_id);
  const login = request.form.get('login') ?? '';
  if (id === undefined || !isValidLogin(login)) throw pageNotFound();
  await revokeUserTokenOfApp(app.clientId, login, id);
  return seeOther(paths.developerApp(app.clientId), 'token-revoked');
});
