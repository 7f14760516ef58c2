import { resetToken } from '#data/authorizations';
import { apiHandler } from '#http/middleware/http-stack';
import { mintFor } from '#services/authorizations';
import { notFound } from '#shared/errors';
import { appToken, appTokenJson } from './app-token.ts';

/** POST /applications/:client_id/tokens/:access_token: a new token; the old one fails at once. */
export const handler = apiHandler('applications/reset-token', {}, async ({ caller, params, urls }) => {
  const found = await appToken(caller, params);
  const minted = mintFor(found.authorization);
  const reset = await resetToken(found.authorization, minted);
  if (!reset) throw notFound(); // revoked or reset by someone else meanwhile
  return { status: 200, body: appTokenJson({ ...found, authorization: reset }, minted.token, urls) };
});
