import { apiHandler } from '#http/middleware/http-stack';
import { appToken, resetAppToken } from '#services/app-tokens';
import { appTokenJson } from './app-token.ts';

/** POST /applications/:client_id/tokens/:access_token: a new token; the old one fails at once. */
export const handler = apiHandler({}, async ({ caller, params, urls }) => {
  const { found, token } = await resetAppToken(await appToken(caller, params.client_id));
  return { status: 200, body: appTokenJson(found, token, urls) };
});
