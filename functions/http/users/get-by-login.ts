import { apiHandler } from '#http/middleware/http-stack';
import { userByLogin } from '#services/users';
import { userJson } from '../json/user.ts';

/** GET /users/:login: a user's public profile. */
export const handler = apiHandler('users/get-by-login', {}, async ({ params, urls }) => ({
  status: 200,
  body: userJson(await userByLogin(params.login ?? ''), urls),
}));
