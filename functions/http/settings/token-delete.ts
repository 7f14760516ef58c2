import { deleteForUser } from '#services/authorizations';
import { personalToken } from './personal-tokens.ts';
import { paths, seeOther, settingsHandler } from './settings-page.ts';

/** POST /settings/tokens/:authorization_id/delete: the token stops working at once. */
export const handler = settingsHandler(paths.tokens, async (request, user) => {
  const token = await personalToken(user, request.params.authorization_id);
  await deleteForUser(user.login, token.id);
  return seeOther(paths.tokens, 'token-deleted');
});
