import { apiHandler } from '#http/middleware/http-stack';
import { appToken, revokeAppToken } from '#services/app-tokens';

/** DELETE /applications/:client_id/tokens/:access_token */
export const handler = apiHandler({}, async ({ caller, params }) => {
  await revokeAppToken(await appToken(caller, params.client_id));
  return { status: 204 };
});
