import { apiHandler } from '#http/middleware/http-stack';
import { requiresAuthentication } from '#shared/errors';
import { userJson } from '../json/user.ts';

/** GET /user: the authenticated user. */
export const handler = apiHandler('users/get-authenticated', {}, async ({ caller, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  return { status: 200, body: userJson(caller.user, urls) };
});
