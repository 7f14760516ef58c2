import { apiHandler } from '#http/middleware/http-stack';
import { deleteForUser } from '#services/authorizations';
import { notFound } from '#shared/errors';
import { idParam } from './fields.ts';

/** DELETE /authorizations/:id: the token stops working at once. */
export const handler = apiHandler({}, async ({ caller, params }) => {
  const id = idParam(params.authorization_id);
  if (caller.kind !== 'user' || id === undefined) throw notFound();
  await deleteForUser(caller.user.login, id);
  return { status: 204 };
});
