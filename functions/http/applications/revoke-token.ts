import { type ApiRequest, apiHandler, type Reply } from '#http/middleware/http-stack';
import { appToken, revokeAppToken } from '#services/app-tokens';

/** Revoke the token (its authorization). The token was read with the application. */
export async function revokeToken({ caller, params }: ApiRequest<unknown>): Promise<Reply> {
  await revokeAppToken(await appToken(caller, params.client_id));
  return { status: 204 };
}

/** DELETE /applications/:client_id/tokens/:access_token */
export const handler = apiHandler({}, revokeToken);
