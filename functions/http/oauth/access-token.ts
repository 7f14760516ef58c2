import { DEVICE_CODE_GRANT } from '#domain/device-codes';
import { oauthHandler } from '#http/middleware/oauth-stack';
import { pollDeviceToken } from '#services/device-flow';
import { exchangeCode } from '#services/oauth-flow';
import { refreshUserToken } from '#services/user-tokens';
import { config } from '#shared/config';
import { countSignal } from '#shared/log';
import { publicUrls } from '#shared/urls';
import { tokenFields } from './token-fields.ts';

/**
 * POST /login/oauth/access_token (spec §4.4, §2.3): the client's credentials and a grant for a
 * token. `grant_type=refresh_token` spends a refresh token of an expiring user token; the device
 * grant polls for a device code; anything else is the authorization code grant (GitHub never
 * required `grant_type` for it).
 */
export const handler = oauthHandler(async ({ params, client, resources, event }) => {
  const urls = publicUrls(config(), event);
  if (params.grant_type === 'refresh_token') {
    const refreshed = await refreshUserToken({
      clientId: client.id,
      clientSecret: client.secret,
      refreshToken: params.refresh_token,
      resources,
      urls,
    }).catch((error: unknown) => {
      countSignal('TokenRefreshFailed');
      throw error;
    });
    countSignal('TokenRefreshSucceeded');
    return tokenFields(refreshed);
  }
  // The device grant (RFC 8628 §3.4); a device_code with any other grant_type is unsupported_grant_type.
  if (params.grant_type === DEVICE_CODE_GRANT || params.device_code !== undefined) {
    const issued = await pollDeviceToken({
      grantType: params.grant_type,
      clientId: client.id,
      deviceCode: params.device_code,
    });
    return tokenFields(issued);
  }
  const issued = await exchangeCode({
    clientId: client.id,
    clientSecret: client.secret,
    code: params.code,
    redirectUri: params.redirect_uri,
    codeVerifier: params.code_verifier,
    resources,
    urls,
  }).catch((error: unknown) => {
    countSignal('CodeExchangeFailed');
    throw error;
  });
  countSignal('CodeExchangeSucceeded');
  return tokenFields(issued);
});
