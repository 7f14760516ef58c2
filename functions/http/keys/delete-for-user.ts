import { keyIdParam } from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { removeUserKey } from '#services/public-keys';
import { notFound, requiresAuthentication } from '#shared/errors';

/** DELETE /user/keys/:key_id: removes one of the caller's SSH keys (its public key is free again). */
export const handler = apiHandler({}, async ({ caller, params }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const id = keyIdParam(params.key_id);
  if (id === undefined) throw notFound();
  await removeUserKey(caller.user.login, id);
  return { status: 204 };
});
