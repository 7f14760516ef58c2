import { readUserAuthState } from '#data/authorizations';
import { apiHandler } from '#http/middleware/http-stack';
import { pagedReply } from '#http/middleware/paged-reply';
import { authorizationJson } from '../json/authorization.ts';
import { jsonContext } from './context.ts';

/** GET /authorizations: the user's authorizations in id order, paged; `token` is always "". */
export const handler = apiHandler('authorizations/list', {}, async ({ caller, query, urls }) => {
  const { authorizations } = await readUserAuthState(caller.kind === 'user' ? caller.user.login : '');
  return pagedReply(authorizations, query, `${urls.api}/authorizations`, async (items) => {
    const context = await jsonContext(items, urls);
    return items.map((a) => authorizationJson(a, context));
  });
});
