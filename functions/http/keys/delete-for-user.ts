import { deleteUserKey } from '#data/public-keys';
import { keyIdParam } from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { notFound, requiresAuthentication } from '#shared/errors';

/** DELETE /user/keys/:key_id: removes one of the caller's SSH keys (its public key is free again). */
export const handler = apiHandler('keys/delete-for-user', {}, async ({ caller, params }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const id = keyIdParam(params.key_id);
  if (id === undefined || !(await deleteUserKey(caller.user.login, id))) throw notFound();
  return { status: 204 };
});
