import { apiHandler } from '#http/middleware/http-stack';
import { pagedReply } from '#http/middleware/paged-reply';
import { userKeys } from '#services/public-keys';
import { requiresAuthentication } from '#shared/errors';
import { userKeyJson } from '../json/public-key.ts';

/** GET /user/keys: the authenticated user's SSH keys, paged in id order. */
export const handler = apiHandler({}, async ({ caller, query, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const keys = await userKeys(caller.user.login);
  return pagedReply(keys, query, `${urls.api}/user/keys`, (page) =>
    page.map((key) => userKeyJson(key, urls)),
  );
});
