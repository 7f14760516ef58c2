import { apiHandler } from '#http/middleware/http-stack';
import { appToken } from '#services/app-tokens';
import { countSignal } from '#shared/log';
import { appTokenJson } from './app-token.ts';

/** GET /applications/:client_id/tokens/:access_token: 200 with the token and its user, or 404. */
export const handler = apiHandler({}, async ({ caller, params, urls }) => {
  const token = await appToken(caller, params.client_id).catch((error: unknown) => {
    countSignal('TokenCheckFailed');
    throw error;
  });
  countSignal('TokenCheckSucceeded');
  return { status: 200, body: appTokenJson(token, params.access_token ?? '', urls) };
});
