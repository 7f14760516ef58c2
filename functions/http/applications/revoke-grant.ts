import { apiHandler } from '#http/middleware/http-stack';
import { appToken } from '#services/app-tokens';
import { revokeGrant } from '#services/authorizations';

/** DELETE /applications/:client_id/grants/:access_token: the token owner's whole grant for the app. */
export const handler = apiHandler({}, async ({ caller, params }) => {
  const { app, authorization } = await appToken(caller, params.client_id);
  await revokeGrant(authorization.login, app.clientId);
  return { status: 204 };
});
