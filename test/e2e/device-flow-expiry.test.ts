import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '#shared/config';
import { admin } from '#test/admin';
import { createApp, createUser, signedUpUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';

/**
 * Device codes expire: this file's stack gives them 2 seconds (DEVICE_CODE_TTL_SECONDS) instead
 * of GitHub's 15 minutes, so that expiry is seen without a clock of its own.
 */
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let app: Awaited<ReturnType<typeof createApp>>;

beforeAll(async () => {
  process.env[ENV.deviceCodeTtlSeconds] = '2';
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'owner');
  app = await createApp(stack.endpointsFile, 'owner', 'Short Lived');
  expect((await admin(stack.endpointsFile, 'app', 'device-flow', 'enable', app.clientId)).code).toBe(0);
}, 40_000);
afterAll(async () => {
  delete process.env[ENV.deviceCodeTtlSeconds];
  await stack?.stop();
});

const post = async (path: string, params: Record<string, string>) =>
  json(
    await fetch(`${stack.webUrl}${path}`, {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params),
    }),
  );

describe('an expired device code', () => {
  it('answers expired_token to the device and is not accepted on the device page', async () => {
    const user = await signedUpUser(stack.webUrl, 'late');
    const codes = await post('/login/device/code', { client_id: app.clientId });
    expect(codes.expires_in).toBe(2);
    const poll = () =>
      post('/login/oauth/access_token', {
        client_id: app.clientId,
        device_code: codes.device_code,
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      });
    expect((await poll()).error).toBe('authorization_pending');
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect(await poll()).toMatchObject({
      error: 'expired_token',
      error_description: 'The `device_code` has expired.',
    });
    await user.browser.get('/login/device');
    expect((await user.browser.post('/login/device', { user_code: codes.user_code })).status).toBe(400);
    expect(user.browser.lastHtml).toContain('not valid, or it has expired');
  });
});
