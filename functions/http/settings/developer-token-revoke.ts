import { deleteAuthorization, getAuthorization } from '#data/authorizations';
import { isValidLogin } from '#domain/users';
import { idParam } from '../authorizations/fields.ts';
import { ownedApp } from './owned-app.ts';
import { pageNotFound, paths, seeOther, settingsHandler } from './settings-page.ts';

/**
 * POST /settings/developers/:client_id/authorizations/:authorization_id/revoke (form field `login`):
 * the owner revokes one user's token of their application, as the API's revoke-token does. The
 * authorization must be that user's and this application's, else 404.
 */
export const handler = settingsHandler(
  'settings/developer-token-revoke',
  paths.developers,
  async (request, user) => {
    const app = await ownedApp(user, request.params.client_id);
    const id = idParam(request.params.authorization_id);
    const login = request.form.get('login') ?? '';
    if (id === undefined || !isValidLogin(login)) throw pageNotFound();
    const authorization = await getAuthorization(login, id);
    if (!authorization || authorization.clientId !== app.clientId) throw pageNotFound();
    if (!(await deleteAuthorization(authorization.login, authorization.id))) throw pageNotFound();
    return seeOther(paths.developerApp(app.clientId), 'token-revoked');
  },
);
