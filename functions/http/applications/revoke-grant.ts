import { revokeGrant } from '#domain/authorization-service';
import { apiHandler } from '#shared/http-stack';
import { appToken } from './app-token.ts';

/** DELETE /applications/:client_id/grants/:access_token: the token owner's whole grant for the app. */
export const handler = apiHandler('applications/revoke-grant', {}, async ({ caller, params }) => {
  const { app, authorization } = await appToken(caller, params);
  await revokeGrant(authorization.login, app.clientId);
  return { status: 204 };
});
