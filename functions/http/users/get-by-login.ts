import { getUser } from '#data/users';
import { apiHandler } from '#http/middleware/http-stack';
import { notFound } from '#shared/errors';
import { userJson } from '../json/user.ts';

/** GET /users/:login: a user's public profile. */
export const handler = apiHandler('users/get-by-login', {}, async ({ params, urls }) => {
  const user = await getUser(params.login ?? '');
  if (!user) throw notFound();
  return { status: 200, body: userJson(user, urls) };
});
