import { deleteAuthorization } from '#data/authorizations';
import { personalToken } from './personal-tokens.ts';
import { pageNotFound, paths, seeOther, settingsHandler } from './settings-page.ts';

/** POST /settings/tokens/:authorization_id/delete: the token stops working at once. */
export const handler = settingsHandler('settings/token-delete', paths.tokens, async (request, user) => {
  const token = await personalToken(user, request.params.authorization_id);
  if (!(await deleteAuthorization(user.login, token.id))) throw pageNotFound();
  return seeOther(paths.tokens, 'token-deleted');
});
