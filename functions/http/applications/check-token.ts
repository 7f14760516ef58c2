import { apiHandler } from '#http/middleware/http-stack';
import { appToken } from '#services/app-tokens';
import { appTokenJson } from './app-token.ts';

/** GET /applications/:client_id/tokens/:access_token: 200 with the token and its user, or 404. */
export const handler = apiHandler('applications/check-token', {}, async ({ caller, params, urls }) => ({
  status: 200,
  body: appTokenJson(await appToken(caller, params.client_id), params.access_token ?? '', urls),
}));
