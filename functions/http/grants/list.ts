import { apiHandler } from '#http/middleware/http-stack';
import { pagedReply } from '#http/middleware/paged-reply';
import { appDirectory } from '#services/apps';
import { grantsForUser } from '#services/grants';
import { requiresAuthentication } from '#shared/errors';
import { grantJson } from '../json/authorization.ts';

/** GET /applications/grants: one grant per application with tokens, paged. */
export const handler = apiHandler({}, async ({ caller, query, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const grants = await grantsForUser(caller.user.login);
  return pagedReply(grants, query, `${urls.api}/applications/grants`, async (items) => {
    const apps = await appDirectory(items.map((g) => g.clientId));
    return items.map((g) => grantJson(g, urls, apps));
  });
});
