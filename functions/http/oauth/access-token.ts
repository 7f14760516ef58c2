import { DEVICE_CODE_GRANT } from '#domain/device-codes';
import { oauthHandler } from '#http/middleware/oauth-stack';
import { pollDeviceToken } from '#services/device-flow';
import { exchangeCode } from '#services/oauth-flow';
import { countSignal } from '#shared/log';

/** POST /login/oauth/access_token (spec §4.4, §2.3): a code and the client's credentials for a token. */
export const handler = oauthHandler(async ({ params, client }) => {
  // The device grant (RFC 8628 §3.4); a device_code with any other grant_type is unsupported_grant_type.
  if (params.grant_type === DEVICE_CODE_GRANT || params.device_code !== undefined) {
    const issued = await pollDeviceToken({
      grantType: params.grant_type,
      clientId: client.id,
      deviceCode: params.device_code,
    });
    return { access_token: issued.accessToken, scope: issued.scopes.join(','), token_type: 'bearer' };
  }
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
