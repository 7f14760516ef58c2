import { type ApiRequest, apiHandler, type Reply } from '#http/middleware/http-stack';
import { appToken } from '#services/app-tokens';
import { revokeGrant as revokeGrantOf } from '#services/authorizations';

/** Revoke the token owner's whole grant for the app. The token was read with the application. */
export async function revokeGrant({ caller, params }: ApiRequest<unknown>): Promise<Reply> {
  const { app, authorization } = await appToken(caller, params.client_id);
  await revokeGrantOf(authorization.login, app.clientId);
  return { status: 204 };
}

/** DELETE /applications/:client_id/grants/:access_token */
export const handler = apiHandler({}, revokeGrant);
