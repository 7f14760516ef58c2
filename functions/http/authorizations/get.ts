import { getAuthorization } from '#data/authorizations';
import { apiHandler } from '#http/middleware/http-stack';
import { notFound } from '#shared/errors';
import { authorizationJson } from '../json/authorization.ts';
import { jsonContext } from './context.ts';
import { idParam } from './fields.ts';

/** GET /authorizations/:id (only the caller's own). */
export const handler = apiHandler('authorizations/get', {}, async ({ caller, params, urls }) => {
  const id = idParam(params.authorization_id);
  const authorization =
    caller.kind === 'user' && id !== undefined ? await getAuthorization(caller.user.login, id) : undefined;
  if (!authorization) throw notFound();
  return { status: 200, body: authorizationJson(authorization, await jsonContext([authorization], urls)) };
});
