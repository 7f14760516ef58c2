import { apiHandler } from '#http/middleware/http-stack';
import { pagedReply } from '#http/middleware/paged-reply';
import { authorizationsOf } from '#services/authorizations';
import { requiresAuthentication } from '#shared/errors';
import { authorizationJson } from '../json/authorization.ts';
import { jsonContext } from './context.ts';

/** GET /authorizations: the user's authorizations in id order, paged; `token` is always "". */
export const handler = apiHandler({}, async ({ caller, query, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const authorizations = await authorizationsOf(caller.user.login);
  return pagedReply(authorizations, query, `${urls.api}/authorizations`, async (items) => {
    const context = await jsonContext(items, urls);
    return items.map((a) => authorizationJson(a, context));
  });
});
