import { deleteAuthorization } from '#data/authorizations';
import { apiHandler } from '#http/middleware/http-stack';
import { appToken } from './app-token.ts';

/** DELETE /applications/:client_id/tokens/:access_token */
export const handler = apiHandler('applications/revoke-token', {}, async ({ caller, params }) => {
  const { authorization } = await appToken(caller, params);
  await deleteAuthorization(authorization.login, authorization.id);
  return { status: 204 };
});
