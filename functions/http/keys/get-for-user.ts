import { keyIdParam } from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { userKey } from '#services/public-keys';
import { notFound, requiresAuthentication } from '#shared/errors';
import { userKeyJson } from '../json/public-key.ts';

/** GET /user/keys/:key_id: one of the caller's SSH keys; anyone else's is 404. */
export const handler = apiHandler({}, async ({ caller, params, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const id = keyIdParam(params.key_id);
  if (id === undefined) throw notFound();
  return { status: 200, body: userKeyJson(await userKey(caller.user.login, id), urls) };
});
