import { type ApiRequest, apiHandler, type Reply } from '#http/middleware/http-stack';
import { appToken, resetAppToken } from '#services/app-tokens';
import { appTokenJson } from './app-token.ts';

/** Reset: a new token; the old one fails at once. The token was read with the application. */
export async function resetToken({ caller, params, urls }: ApiRequest<unknown>): Promise<Reply> {
  const { found, token } = await resetAppToken(await appToken(caller, params.client_id));
  return { status: 200, body: appTokenJson(found, token, urls) };
}

/** POST /applications/:client_id/tokens/:access_token */
export const handler = apiHandler({}, resetToken);
