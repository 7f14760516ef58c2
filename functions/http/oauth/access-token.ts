import { oauthHandler } from '#http/middleware/oauth-stack';
import { exchangeCode } from '#services/oauth-flow';
import { countSignal } from '#shared/log';

/** POST /login/oauth/access_token (spec §4.4, §2.3): a code and the client's credentials for a token. */
export const handler = oauthHandler(async ({ params, client }) => {
  const issued = await exchangeCode({
    clientId: client.id,
    clientSecret: client.secret,
    code: params.code,
    redirectUri: params.redirect_uri,
    codeVerifier: params.code_verifier,
  }).catch((error: unknown) => {
    countSignal('CodeExchangeFailed');
    throw error;
  });
  countSignal('CodeExchangeSucceeded');
  return { access_token: issued.accessToken, scope: issued.scopes.join(','), token_type: 'bearer' };
});
