import { apiHandler } from '#http/middleware/http-stack';
import { profileByLogin } from '#services/users';
import { userJson } from '../json/user.ts';

/** GET /users/:login: a user's public profile (the same for every caller, as on GitHub). */
export const handler = apiHandler({}, async ({ params, urls }) => {
  const profile = await profileByLogin(params.login ?? '');
  return { status: 200, body: userJson(profile.user, urls, profile.stats) };
});
