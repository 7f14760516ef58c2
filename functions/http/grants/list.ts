import { getApps } from '#data/apps';
import { grantsOf, readUserAuthState } from '#data/authorizations';
import { apiHandler } from '#http/middleware/http-stack';
import { pagedReply } from '#http/middleware/paged-reply';
import { grantJson } from '../json/authorization.ts';

/** GET /applications/grants: one grant per application with tokens, paged. */
export const handler = apiHandler('grants/list', {}, async ({ caller, query, urls }) => {
  const login = caller.kind === 'user' ? caller.user.login : '';
  const grants = grantsOf(await readUserAuthState(login), login);
  return pagedReply(grants, query, `${urls.api}/applications/grants`, async (items) => {
    const apps = await getApps(items.map((g) => g.clientId));
    return items.map((g) => grantJson(g, urls, apps));
  });
});
