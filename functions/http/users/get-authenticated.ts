import { apiHandler } from '#http/middleware/http-stack';
import { ownProfile } from '#services/users';
import { requiresAuthentication } from '#shared/errors';
import { privateUserJson } from '../json/user.ts';

/** GET /user: the authenticated user. */
export const handler = apiHandler({}, async ({ caller, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const { user, stats } = await ownProfile(caller.user);
  return { status: 200, body: privateUserJson(user, urls, stats) };
});
