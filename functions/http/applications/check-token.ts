import { type ApiRequest, apiHandler, type Reply } from '#http/middleware/http-stack';
import { appToken } from '#services/app-tokens';
import { countSignal } from '#shared/log';
import { appTokenJson } from './app-token.ts';

/**
 * Check: 200 with the token and its user, or 404. `token` is the one authentication read with the
 * application; the 2015 route names it in the path, the 2020 route in the body.
 */
export async function checkToken(
  { caller, params, urls }: ApiRequest<unknown>,
  token: string,
): Promise<Reply> {
  const found = await appToken(caller, params.client_id).catch((error: unknown) => {
    countSignal('TokenCheckFailed');
    throw error;
  });
  countSignal('TokenCheckSucceeded');
  return { status: 200, body: appTokenJson(found, token, urls) };
}

/** GET /applications/:client_id/tokens/:access_token */
export const handler = apiHandler({}, (request) => checkToken(request, request.params.access_token ?? ''));
