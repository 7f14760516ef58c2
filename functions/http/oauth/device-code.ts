import { oauthHandler } from '#http/middleware/oauth-stack';
import { requestDeviceCodes } from '#services/device-flow';
import { config } from '#shared/config';
import { pathTo } from '#shared/routes';
import { publicUrls } from '#shared/urls';

/**
 * POST /login/device/code (RFC 8628 §3.1–3.2): a device code and a user code for a public client
 * (no secret), answered form-encoded, JSON or XML like the token endpoint.
 */
export const handler = oauthHandler(async ({ params, client, resources, event }) => {
  const settings = config();
  const codes = await requestDeviceCodes(
    client.id,
    params.scope,
    { ttlSeconds: settings.deviceCodeTtlSeconds, intervalSeconds: settings.devicePollIntervalSeconds },
    { resources, urls: publicUrls(settings, event) },
  );
  return {
    device_code: codes.deviceCode,
    user_code: codes.userCode,
    verification_uri: `${publicUrls(settings, event).auth}${pathTo('oauth/device')}`,
    expires_in: codes.expiresIn,
    interval: codes.interval,
  };
});
