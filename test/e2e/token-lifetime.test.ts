import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { createApp, createUser, signedUpUser } from '#test/fixtures';
import { basicAuth, json, startTestStack } from '#test/stack';

/**
 * Lifetimes shortened through the local stack's configuration (this file's own process): user
 * tokens live 3 s and refresh tokens 5 s, so expiry is seen within a few seconds.
 */
process.env.USER_TOKEN_SECONDS = '3';
process.env.REFRESH_TOKEN_SECONDS = '5';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let app: Awaited<ReturnType<typeof createApp>>;

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'hubot');
  app = await createApp(stack.endpointsFile, 'hubot', 'Short-lived App');
  await admin(stack.endpointsFile, 'app', 'token-expiration', 'enable', app.clientId);
});
afterAll(async () => {
  await stack?.stop();
});

let users = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const tokenEndpoint = async (params: Record<string, string>) =>
  json(
    await fetch(`${stack.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { Accept: 'application/json' },
      body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, ...params }),
    }),
  );

async function issue() {
  const { browser } = await signedUpUser(stack.webUrl, `user-${++users}`);
  await browser.get(`/login/oauth/authorize?client_id=${app.clientId}`);
  const fields = Object.fromEntries(
    [...browser.lastHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
      .filter((m) => m[1] !== '_csrf')
      .map((m) => [m[1] ?? '', m[2] ?? '']),
  );
  const decided = await browser.post('/login/oauth/authorize', { ...fields, decision: 'authorize' });
  const code = new URL(decided.headers.get('location') ?? '').searchParams.get('code') ?? '';
  return tokenEndpoint({ code });
}

/** RFC 7662 introspection by the token's own application. */
const introspect = async (token: string) =>
  json(
    await fetch(`${stack.webUrl}/login/oauth/introspect`, {
      method: 'POST',
      headers: { Authorization: basicAuth(app.clientId, app.clientSecret) },
      body: new URLSearchParams({ token }),
    }),
  );

const userStatus = async (token: string) =>
  (await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } })).status;

describe('token lifetimes', () => {
  it('an expired access token is 401 Bad credentials and 404 to its app; its refresh token still buys a new one until it expires too', async () => {
    const [first, second] = await Promise.all([issue(), issue()]);
    expect(first.expires_in).toBe(3);
    expect(first.refresh_token_expires_in).toBe(5);
    expect(await userStatus(first.access_token)).toBe(200);
    const live = await introspect(first.access_token);
    expect(live).toMatchObject({ active: true, username: 'user-1' });
    expect(live.exp - live.iat).toBeGreaterThanOrEqual(2);
    expect(live.exp - live.iat).toBeLessThanOrEqual(4);

    await sleep(3_100);
    expect(await introspect(first.access_token)).toEqual({ active: false });
    const expired = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: `token ${first.access_token}` },
    });
    expect(expired.status).toBe(401);
    expect((await json(expired)).message).toBe('Bad credentials');
    const checked = await fetch(
      `${stack.baseUrl}/applications/${app.clientId}/tokens/${first.access_token}`,
      {
        headers: { Authorization: basicAuth(app.clientId, app.clientSecret) },
      },
    );
    expect(checked.status).toBe(404);

    const refreshed = await tokenEndpoint({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
    });
    expect(refreshed.access_token).toMatch(/^gho_/);
    expect(await userStatus(refreshed.access_token)).toBe(200);

    await sleep(2_000); // the second user's refresh token (5 s) has expired by now
    const late = await tokenEndpoint({ grant_type: 'refresh_token', refresh_token: second.refresh_token });
    expect(late.error).toBe('bad_refresh_token');
  });
});
