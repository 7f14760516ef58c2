import { deleteAuthorization } from '#data/authorizations';
import { apiHandler } from '#http/middleware/http-stack';
import { notFound } from '#shared/errors';
import { idParam } from './fields.ts';

/** DELETE /authorizations/:id: the token stops working at once. */
export const handler = apiHandler('authorizations/delete', {}, async ({ caller, params }) => {
  const id = idParam(params.authorization_id);
  if (caller.kind !== 'user' || id === undefined || !(await deleteAuthorization(caller.user.login, id)))
    throw notFound();
  return { status: 204 };
});
