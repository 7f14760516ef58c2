import { resetToken } from '#data/authorizations';
import { mintFor } from '#domain/authorization-service';
import { config } from '#shared/config';
import { notFound } from '#shared/errors';
import { apiHandler } from '#shared/http-stack';
import { authorizationJson } from '../json/authorization.ts';
import { appToken, directoryOf } from './app-token.ts';

/** POST /applications/:client_id/tokens/:access_token: a new token; the old one fails at once. */
export const handler = apiHandler('applications/reset-token', {}, async ({ caller, params, urls }) => {
  const { app, authorization, user } = await appToken(caller, params);
  const minted = mintFor(authorization);
  const reset = await resetToken(authorization, minted);
  if (!reset) throw notFound(); // revoked or reset by someone else meanwhile
  return {
    status: 200,
    body: authorizationJson(reset, {
      urls,
      apps: directoryOf(app),
      docsUrl: config().docsUrl,
      token: minted.token,
      user,
    }),
  };
});
