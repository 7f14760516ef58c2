import { apiHandler } from '#shared/http-stack';
import { countSignal } from '#shared/log';
import { appToken, appTokenJson } from './app-token.ts';

/** GET /applications/:client_id/tokens/:access_token: 200 with the token and its user, or 404. */
export const handler = apiHandler('applications/check-token', {}, async ({ caller, params, urls }) => {
  const token = await appToken(caller, params).catch((error: unknown) => {
    countSignal('TokenCheckFailed');
    throw error;
  });
  countSignal('TokenCheckSucceeded');
  return { status: 200, body: appTokenJson(token, params.access_token ?? '', urls) };
});
