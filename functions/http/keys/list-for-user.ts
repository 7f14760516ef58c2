import { listUserKeys } from '#data/public-keys';
import { requiresAuthentication } from '#shared/errors';
import { apiHandler } from '#shared/http-stack';
import { pagedReply } from '#shared/paged-reply';
import { userKeyJson } from '../json/public-key.ts';

/** GET /user/keys: the authenticated user's SSH keys, paged in id order. */
export const handler = apiHandler('keys/list-for-user', {}, async ({ caller, query, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const keys = await listUserKeys(caller.user.login);
  return pagedReply(keys, query, `${urls.api}/user/keys`, (page) =>
    page.map((key) => userKeyJson(key, urls)),
  );
});
