import { config } from '#shared/config';
import { apiHandler } from '#shared/http-stack';
import { authorizationJson } from '../json/authorization.ts';
import { appToken, directoryOf } from './app-token.ts';

/** GET /applications/:client_id/tokens/:access_token: 200 with the token and its user, or 404. */
export const handler = apiHandler('applications/check-token', {}, async ({ caller, params, urls }) => {
  const { app, authorization, user } = await appToken(caller, params);
  return {
    status: 200,
    body: authorizationJson(authorization, {
      urls,
      apps: directoryOf(app),
      docsUrl: config().docsUrl,
      token: params.access_token,
      user,
    }),
  };
});
