import { apiHandler } from '#http/middleware/http-stack';
import { revokeGrant } from '#services/authorizations';
import { appToken } from './app-token.ts';

/** DELETE /applications/:client_id/grants/:access_token: the token owner's whole grant for the app. */
export const handler = apiHandler('applications/revoke-grant', {}, async ({ caller, params }) => {
  const { app, authorization } = await appToken(caller, params);
  await revokeGrant(authorization.login, app.clientId);
  return { status: 204 };
});
