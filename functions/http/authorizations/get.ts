import { apiHandler } from '#http/middleware/http-stack';
import { authorizationOf } from '#services/authorizations';
import { notFound } from '#shared/errors';
import { authorizationJson } from '../json/authorization.ts';
import { jsonContext } from './context.ts';
import { idParam } from './fields.ts';

/** GET /authorizations/:id (only the caller's own). */
export const handler = apiHandler({}, async ({ caller, params, urls }) => {
  const id = idParam(params.authorization_id);
  if (caller.kind !== 'user' || id === undefined) throw notFound();
  const authorization = await authorizationOf(caller.user.login, id);
  return { status: 200, body: authorizationJson(authorization, await jsonContext([authorization], urls)) };
});
