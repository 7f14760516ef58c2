import { createOAuthDeviceAuth } from '@octokit/auth-oauth-device';
import { request } from '@octokit/request';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { createApp, createUser, signedUpUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/**
 * The device authorization grant (RFC 8628) end to end: real clients (@octokit/auth-oauth-device,
 * oauth4webapi) against the local stack, the user approving on the device page over HTTP.
 */
type Stack = Awaited<ReturnType<typeof startTestStack>>;
type App = Awaited<ReturnType<typeof createApp>>;
let stack: Stack;
let app: App;
let otherApp: App;
let disabledApp: App;
let expiringApp: App;
let user: Awaited<ReturnType<typeof signedUpUser>>;

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

beforeAll(async () => {
  stack = await startTestStack();
  [user] = await Promise.all([signedUpUser(stack.webUrl, 'mona'), createUser(stack.endpointsFile, 'owner')]);
  [app, otherApp, disabledApp, expiringApp] = await Promise.all([
    createApp(stack.endpointsFile, 'owner', 'Octo CLI'),
    createApp(stack.endpointsFile, 'owner', 'Other CLI'),
    createApp(stack.endpointsFile, 'owner', 'Browser Only'),
    createApp(stack.endpointsFile, 'owner', 'Expiring CLI'),
  ]);
  const enabled = await Promise.all(
    [app, otherApp, expiringApp].map((target) =>
      admin(stack.endpointsFile, 'app', 'device-flow', 'enable', target.clientId),
    ),
  );
  for (const result of enabled) expect(result.json).toMatchObject({ device_flow_enabled: true });
  const expiring = await admin(
    stack.endpointsFile,
    'app',
    'token-expiration',
    'enable',
    expiringApp.clientId,
  );
  expect(expiring.code, expiring.stderr).toBe(0);
}, 40_000);
afterAll(async () => {
  await stack?.stop();
});

interface Answer {
  readonly status: number;
  readonly type: string;
  // biome-ignore lint/suspicious/noExplicitAny: bodies are asserted field by field
  readonly body: any;
}

/** A POST to the web origin with form parameters, read as JSON (or as text for other formats). */
async function post(
  path: string,
  params: Record<string, string>,
  accept = 'application/json',
): Promise<Answer> {
  const response = await fetch(`${stack.webUrl}${path}`, {
    method: 'POST',
    headers: { Accept: accept, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    type,
    body: type.startsWith('application/json') ? await response.json() : await response.text(),
  };
}

const requestCodes = (clientId: string, scope = 'repo') =>
  post('/login/device/code', { client_id: clientId, scope });
const poll = (clientId: string, deviceCode: string, grantType = DEVICE_GRANT) =>
  post('/login/oauth/access_token', { client_id: clientId, device_code: deviceCode, grant_type: grantType });

/** The user enters the code and decides; returns the last page's response. */
async function decide(browser: WebClient, userCode: string, decision: 'authorize' | 'cancel') {
  expect((await browser.get('/login/device')).status).toBe(200);
  const confirm = await browser.post('/login/device', {
    user_code: userCode.toLowerCase().replace('-', ' '),
  });
  expect(confirm.status).toBe(200);
  expect(browser.lastHtml).toContain('Authorize ');
  return browser.post('/login/device/authorize', { user_code: userCode, decision });
}

async function codesFor(target: App, scope = 'repo') {
  const answer = await requestCodes(target.clientId, scope);
  expect(answer.status).toBe(200);
  return answer.body as { device_code: string; user_code: string; interval: number; expires_in: number };
}

describe('device authorization request', () => {
  it('answers codes as JSON, form or XML by Accept, with GitHub’s fields', async () => {
    const asJson = await requestCodes(app.clientId);
    expect(asJson.type).toMatch(/^application\/json/);
    expect(asJson.body).toEqual({
      device_code: expect.stringMatching(/^[0-9a-f]{40}$/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: `${stack.webUrl}/login/device`,
      expires_in: 900,
      interval: 5,
    });
    const asForm = await post('/login/device/code', { client_id: app.clientId }, '*/*');
    expect(asForm.type).toMatch(/^application\/x-www-form-urlencoded/);
    const form = new URLSearchParams(asForm.body);
    expect(form.get('expires_in')).toBe('900');
    expect(form.get('verification_uri')).toBe(`${stack.webUrl}/login/device`);
    const asXml = await post('/login/device/code', { client_id: app.clientId }, 'application/xml');
    expect(asXml.type).toMatch(/^application\/xml/);
    expect(asXml.body).toMatch(
      /^<OAuth><device_code>[0-9a-f]{40}<\/device_code><user_code>[A-Z]{4}-[A-Z]{4}<\/user_code><verification_uri>.+<\/verification_uri><expires_in>900<\/expires_in><interval>5<\/interval><\/OAuth>$/,
    );
  });

  it('refuses an unknown client, a missing client_id and an application without the device flow', async () => {
    for (const params of [{ client_id: '0123456789abcdef0123' }, {}] as Record<string, string>[]) {
      const answer = await post('/login/device/code', params);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ error: 'incorrect_client_credentials' });
    }
    const disabled = await requestCodes(disabledApp.clientId);
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({
      error: 'device_flow_disabled',
      error_description: 'Device Flow must be explicitly enabled for this App',
    });
  });
});

describe('device flow with @octokit/auth-oauth-device', () => {
  it('polls while the user approves on the device page, and the token is a real authorization of the app', async () => {
    const answers: string[] = [];
    let verification = { user_code: '', verification_uri: '' };
    let approval: Promise<Response> | undefined;
    const auth = createOAuthDeviceAuth({
      clientType: 'oauth-app',
      clientId: app.clientId,
      scopes: ['repo', 'gist'],
      request: request.defaults({
        baseUrl: stack.baseUrl,
        request: {
          hook: async (send: typeof request, options: Parameters<typeof request>[0] & { url?: string }) => {
            const response = await send(options);
            if (String(options.url).endsWith('/login/oauth/access_token')) {
              answers.push(String(response.data.error ?? 'token'));
              // The user approves once the device has been told to wait.
              if (response.data.error === 'authorization_pending')
                approval ??= decide(user.browser, verification.user_code, 'authorize');
            }
            return response;
          },
        },
      }),
      onVerification: (shown) => {
        verification = shown;
      },
    });
    const authentication = await auth({ type: 'oauth' });
    expect(verification.verification_uri).toBe(`${stack.webUrl}/login/device`);
    expect(answers).toEqual(['authorization_pending', 'token']);
    const done = await approval;
    expect(done?.status).toBe(200);
    // GitHub's `scope` is comma-separated; Octokit splits it on whitespace only.
    expect(authentication).toMatchObject({ type: 'token', tokenType: 'oauth', scopes: ['gist,repo'] });
    const { token } = authentication as { token: string };
    expect(token).toMatch(/^gho_/);

    const me = await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } });
    expect(me.status).toBe(200);
    expect(me.headers.get('x-oauth-scopes')).toBe('gist, repo');
    expect(await json(me)).toMatchObject({ login: 'mona' });

    const grants = await fetch(`${stack.baseUrl}/applications/grants`, {
      headers: { Authorization: user.auth },
    });
    expect(
      (await json(grants)).map((grant: { app: { client_id: string } }) => grant.app.client_id),
    ).toContain(app.clientId);
    const checkUrl = `${stack.baseUrl}/applications/${app.clientId}/tokens/${token}`;
    const check = await fetch(checkUrl, { headers: { Authorization: app.basic } });
    expect(check.status).toBe(200);
    expect(await json(check)).toMatchObject({ scopes: ['gist', 'repo'], user: { login: 'mona' } });
    expect((await fetch(checkUrl, { method: 'DELETE', headers: { Authorization: app.basic } })).status).toBe(
      204,
    );
    expect(
      (await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } })).status,
    ).toBe(401);
  }, 30_000);
});

describe('device token polls', () => {
  it('answers pending, then slow_down with an interval grown by 5 s each time, in every format', async () => {
    const codes = await codesFor(app);
    expect((await poll(app.clientId, codes.device_code)).body).toMatchObject({
      error: 'authorization_pending',
      error_description: 'The authorization request is still pending.',
    });
    const slow = await poll(app.clientId, codes.device_code);
    expect(slow.status).toBe(200);
    expect(slow.body).toMatchObject({ error: 'slow_down', interval: 10 });
    const slower = await post(
      '/login/oauth/access_token',
      { client_id: app.clientId, device_code: codes.device_code, grant_type: DEVICE_GRANT },
      'application/xml',
    );
    expect(slower.body).toMatch(/<interval>15<\/interval>.*<error>slow_down<\/error>/);
    const asForm = await post(
      '/login/oauth/access_token',
      { client_id: app.clientId, device_code: codes.device_code, grant_type: DEVICE_GRANT },
      '',
    );
    expect(new URLSearchParams(asForm.body).get('interval')).toBe('20');
  });

  it('concurrent early polls all answer slow_down, each growth stored once (the next poll sees the largest)', async () => {
    const codes = await codesFor(app);
    expect((await poll(app.clientId, codes.device_code)).body.error).toBe('authorization_pending');
    const early = await Promise.all(Array.from({ length: 4 }, () => poll(app.clientId, codes.device_code)));
    const intervals = early.map((answer) => {
      expect(answer.body.error).toBe('slow_down');
      return Number(answer.body.interval);
    });
    // Polls that read the same interval grow it once (a conditional write on the old value); a poll
    // that read an already grown interval was early for that one too and grows it again.
    for (const interval of intervals) expect([10, 15, 20, 25]).toContain(interval);
    const largest = Math.max(...intervals);
    expect((await poll(app.clientId, codes.device_code)).body).toMatchObject({
      error: 'slow_down',
      interval: largest + 5,
    });
  });

  it('gives the token once: a replayed device code is incorrect_device_code', async () => {
    const codes = await codesFor(app, 'user');
    expect((await decide(user.browser, codes.user_code, 'authorize')).status).toBe(200);
    expect(user.browser.lastHtml).toContain('Your device is now connected to Octo CLI');
    const first = await poll(app.clientId, codes.device_code);
    expect(first.body).toEqual({
      access_token: expect.stringMatching(/^gho_/),
      scope: 'user',
      token_type: 'bearer',
    });
    const again = await poll(app.clientId, codes.device_code);
    expect(again.body).toMatchObject({ error: 'incorrect_device_code' });
    // Concurrent exchanges of one approved code: exactly one token.
    const racing = await codesFor(app);
    await decide(user.browser, racing.user_code, 'authorize');
    const answers = await Promise.all([1, 2, 3, 4].map(() => poll(app.clientId, racing.device_code)));
    expect(answers.filter((answer) => answer.body.access_token).length).toBe(1);
    for (const answer of answers) expect(answer.status).toBe(200);
  });

  it('answers access_denied after Cancel', async () => {
    const codes = await codesFor(app);
    expect((await decide(user.browser, codes.user_code, 'cancel')).status).toBe(200);
    expect(user.browser.lastHtml).toContain('Authorization cancelled');
    expect((await poll(app.clientId, codes.device_code)).body).toMatchObject({ error: 'access_denied' });
  });

  it('refuses another client’s code, a wrong grant_type, missing fields and unknown clients', async () => {
    const codes = await codesFor(app);
    const cases: Array<[Record<string, string>, string]> = [
      [
        { client_id: otherApp.clientId, device_code: codes.device_code, grant_type: DEVICE_GRANT },
        'incorrect_device_code',
      ],
      [
        { client_id: app.clientId, device_code: codes.device_code, grant_type: 'authorization_code' },
        'unsupported_grant_type',
      ],
      [{ client_id: app.clientId, device_code: codes.device_code }, 'unsupported_grant_type'],
      [{ client_id: app.clientId, grant_type: DEVICE_GRANT }, 'incorrect_device_code'],
      [
        { client_id: app.clientId, device_code: 'not-a-code', grant_type: DEVICE_GRANT },
        'incorrect_device_code',
      ],
      [
        { client_id: app.clientId, device_code: 'f'.repeat(40), grant_type: DEVICE_GRANT },
        'incorrect_device_code',
      ],
      [{ device_code: codes.device_code, grant_type: DEVICE_GRANT }, 'incorrect_client_credentials'],
      [
        { client_id: '0123456789abcdef0123', device_code: codes.device_code, grant_type: DEVICE_GRANT },
        'incorrect_client_credentials',
      ],
    ];
    for (const [params, error] of cases) {
      const answer = await post('/login/oauth/access_token', params);
      expect({ params, status: answer.status, error: answer.body.error }).toEqual({
        params,
        status: 200,
        error,
      });
    }
    // Nothing above consumed the code's polling budget or the code itself.
    expect((await poll(app.clientId, codes.device_code)).body.error).toBe('authorization_pending');
  });

  it('answers device_flow_disabled once the owner turned the device flow off', async () => {
    const codes = await codesFor(otherApp);
    await decide(user.browser, codes.user_code, 'authorize');
    expect((await admin(stack.endpointsFile, 'app', 'device-flow', 'disable', otherApp.clientId)).code).toBe(
      0,
    );
    expect((await poll(otherApp.clientId, codes.device_code)).body).toMatchObject({
      error: 'device_flow_disabled',
    });
    expect((await requestCodes(otherApp.clientId)).body).toMatchObject({ error: 'device_flow_disabled' });
    const [enabled, unknown] = await Promise.all([
      admin(stack.endpointsFile, 'app', 'device-flow', 'enable', otherApp.clientId),
      admin(stack.endpointsFile, 'app', 'device-flow', 'enable', '0123456789abcdef0123'),
    ]);
    expect(enabled.json).toMatchObject({ client_id: otherApp.clientId, device_flow_enabled: true });
    // The refused poll counted: polling again at once is too early, and the code is still alive.
    expect((await poll(otherApp.clientId, codes.device_code)).body).toMatchObject({
      error: 'slow_down',
      interval: 10,
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no application/);
  });
});

describe('the device page', () => {
  it('sends signed-out visitors to sign in and back, and refuses forms without the CSRF token', async () => {
    const visitor = new WebClient(stack.webUrl);
    const page = await visitor.get('/login/device');
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('/login?return_to=%2Flogin%2Fdevice');
    const codes = await codesFor(app);
    const forged = await user.browser.post('/login/device', { user_code: codes.user_code }, { csrf: null });
    expect(forged.status).toBe(403);
    const page2 = await user.browser.get('/login/device');
    expect(page2.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(user.browser.lastHtml).toContain('Enter the code displayed on your device');
  });

  it('locks code entry after five wrong codes, with a clear message, even for a right code', async () => {
    const guesser = await signedUpUser(stack.webUrl, 'guesser');
    const codes = await codesFor(app);
    await guesser.browser.get('/login/device');
    const malformed = await guesser.browser.post('/login/device', { user_code: 'AAAA-0000' });
    expect(malformed.status).toBe(400);
    expect(guesser.browser.lastHtml).toContain('8-character code');
    const wrong = ['BBBB-BBBB', 'CCCC-CCCC', 'DDDD-DDDD', 'FFFF-FFFF'].filter(
      (code) => code !== codes.user_code,
    );
    for (const [index, code] of wrong.slice(0, 4).entries()) {
      expect((await guesser.browser.post('/login/device', { user_code: code })).status).toBe(400);
      expect(guesser.browser.lastHtml).toContain(`${4 - index} ${index === 3 ? 'try' : 'tries'} left`);
    }
    const fifth = await guesser.browser.post('/login/device', { user_code: 'GGGG-GGGG' });
    expect(fifth.status).toBe(429);
    expect(guesser.browser.lastHtml).toContain('Too many wrong codes');
    const right = await guesser.browser.post('/login/device', { user_code: codes.user_code });
    expect(right.status).toBe(429);
    expect(guesser.browser.lastHtml).toMatch(/code entry is locked until \d\d:\d\d UTC/);
    // Another user is not locked by the guesser.
    await user.browser.get('/login/device');
    expect((await user.browser.post('/login/device', { user_code: codes.user_code })).status).toBe(200);
  });
});

describe('device flow with oauth4webapi', () => {
  it('gets a token through deviceAuthorizationRequest and deviceCodeGrantRequest', async () => {
    const server: oauth.AuthorizationServer = {
      issuer: stack.webUrl,
      device_authorization_endpoint: `${stack.webUrl}/login/device/code`,
      token_endpoint: `${stack.webUrl}/login/oauth/access_token`,
    };
    const client: oauth.Client = { client_id: app.clientId };
    const options = { [oauth.allowInsecureRequests]: true };
    const started = await oauth.deviceAuthorizationRequest(
      server,
      client,
      oauth.None(),
      new URLSearchParams({ scope: 'read:user' }),
      options,
    );
    const device = await oauth.processDeviceAuthorizationResponse(server, client, started);
    expect(device.verification_uri).toBe(`${stack.webUrl}/login/device`);
    // oauth4webapi reads GitHub's HTTP 200 errors as malformed token responses: approve before polling.
    await decide(user.browser, device.user_code, 'authorize');
    const response = await oauth.deviceCodeGrantRequest(
      server,
      client,
      oauth.None(),
      device.device_code,
      options,
    );
    const tokens = await oauth.processDeviceCodeResponse(server, client, response);
    expect(tokens.token_type).toBe('bearer');
    const me = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: `bearer ${tokens.access_token}` },
    });
    expect(me.status).toBe(200);
  });
});

describe('device flow with a resource indicator (RFC 8707, issue 38)', () => {
  it('binds the token to the MCP endpoint, and refuses a resource served elsewhere', async () => {
    const web = stack.webUrl.replace(/\/$/, '');
    const server: oauth.AuthorizationServer = {
      issuer: stack.webUrl,
      device_authorization_endpoint: `${web}/login/device/code`,
      token_endpoint: `${web}/login/oauth/access_token`,
    };
    const client: oauth.Client = { client_id: app.clientId };
    const options = { [oauth.allowInsecureRequests]: true };
    const request = (resource: string) =>
      oauth.deviceAuthorizationRequest(
        server,
        client,
        oauth.None(),
        new URLSearchParams({ scope: 'read:user', resource }),
        options,
      );
    const elsewhere = await request('https://elsewhere.example/mcp');
    expect(elsewhere.status).toBe(400);
    expect(await json(elsewhere)).toMatchObject({ error: 'invalid_target' });

    const device = await oauth.processDeviceAuthorizationResponse(
      server,
      client,
      await request(`${web}/mcp`),
    );
    await decide(user.browser, device.user_code, 'authorize');
    const tokens = await oauth.processDeviceCodeResponse(
      server,
      client,
      await oauth.deviceCodeGrantRequest(server, client, oauth.None(), device.device_code, options),
    );
    const me = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: `bearer ${tokens.access_token}` },
    });
    expect(me.status).toBe(401);
  });
});

describe('expiring device tokens (a public client: no secret anywhere)', () => {
  const options = { [oauth.allowInsecureRequests]: true };
  const server = (): oauth.AuthorizationServer => ({
    issuer: stack.webUrl,
    device_authorization_endpoint: `${stack.webUrl}/login/device/code`,
    token_endpoint: `${stack.webUrl}/login/oauth/access_token`,
    revocation_endpoint: `${stack.webUrl}/login/oauth/revoke`,
  });
  const userStatus = async (token: string) =>
    (await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `bearer ${token}` } })).status;

  /** Device-flow tokens of `expiringApp`, through oauth4webapi with client_id alone. */
  async function deviceTokens() {
    const client: oauth.Client = { client_id: expiringApp.clientId };
    const device = await oauth.processDeviceAuthorizationResponse(
      server(),
      client,
      await oauth.deviceAuthorizationRequest(server(), client, oauth.None(), new URLSearchParams(), options),
    );
    await decide(user.browser, device.user_code, 'authorize');
    const response = await oauth.deviceCodeGrantRequest(
      server(),
      client,
      oauth.None(),
      device.device_code,
      options,
    );
    return oauth.processDeviceCodeResponse(server(), client, response);
  }

  /** A refresh of an `expiringApp` token, with `secret` or (by default) with client_id alone. */
  const refresh = (refreshToken: string, secret?: string) =>
    post('/login/oauth/access_token', {
      grant_type: 'refresh_token',
      client_id: expiringApp.clientId,
      ...(secret !== undefined ? { client_secret: secret } : {}),
      refresh_token: refreshToken,
    });
  const refreshWithoutSecret = (refreshToken: string) => refresh(refreshToken);

  it('refreshes with client_id alone (oauth4webapi, oauth.None()), as GitHub allows for device-flow tokens', async () => {
    const first = await deviceTokens();
    expect(first.expires_in).toBe(28_800);
    expect(first.refresh_token).toMatch(/^ghr_/);
    const client: oauth.Client = { client_id: expiringApp.clientId };
    const response = await oauth.refreshTokenGrantRequest(
      server(),
      client,
      oauth.None(),
      String(first.refresh_token),
      options,
    );
    const second = await oauth.processRefreshTokenResponse(server(), client, response);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).toMatch(/^ghr_/);
    expect(await userStatus(second.access_token)).toBe(200);
    expect(await userStatus(first.access_token)).toBe(401);
    // The next generation is still a device family: refreshed without a secret again.
    const third = await refreshWithoutSecret(String(second.refresh_token));
    expect(third.body.access_token).toMatch(/^gho_/);
    // A wrong secret is still wrong, even where none is needed.
    const wrong = await refresh(third.body.refresh_token, 'f'.repeat(40));
    expect(wrong.body.error).toBe('incorrect_client_credentials');
    // The right one works too.
    const withSecret = await refresh(third.body.refresh_token, expiringApp.clientSecret);
    expect(withSecret.body.access_token).toMatch(/^gho_/);
  });

  it('a spent device refresh token presented again, secret or not, revokes the family', async () => {
    const first = await deviceTokens();
    const second = await refreshWithoutSecret(String(first.refresh_token));
    expect(await userStatus(second.body.access_token)).toBe(200);
    const reused = await refreshWithoutSecret(String(first.refresh_token));
    expect(reused.body.error).toBe('bad_refresh_token');
    expect(await userStatus(second.body.access_token)).toBe(401);
  });

  it('a web-flow refresh token still needs the secret: incorrect_client_credentials, nothing spent', async () => {
    // Web-flow tokens of the same app: the consent page and the code exchange with the secret.
    const page = await user.browser.get(
      `/login/oauth/authorize?${new URLSearchParams({ client_id: expiringApp.clientId, scope: 'gist' })}`,
    );
    expect(page.status, user.browser.lastHtml).toBe(200);
    const hidden = Object.fromEntries(
      [...user.browser.lastHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
        .filter((m) => m[1] !== '_csrf')
        .map((m) => [m[1] ?? '', (m[2] ?? '').replace(/&amp;/g, '&')]),
    );
    const decided = await user.browser.post('/login/oauth/authorize', {
      ...hidden,
      granted_scope: ['gist'],
      decision: 'authorize',
    });
    const code = new URL(decided.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const web = await post('/login/oauth/access_token', {
      client_id: expiringApp.clientId,
      client_secret: expiringApp.clientSecret,
      code,
    });
    expect(web.body.refresh_token).toMatch(/^ghr_/);
    for (let i = 0; i < 2; i += 1) {
      const refused = await refreshWithoutSecret(web.body.refresh_token);
      expect(refused.status).toBe(200);
      expect(refused.body.error).toBe('incorrect_client_credentials');
    }
    // Not a reuse: the family lives and its refresh token is unspent.
    expect(await userStatus(web.body.access_token)).toBe(200);
    const refreshed = await refresh(web.body.refresh_token, expiringApp.clientSecret);
    expect(refreshed.body.access_token).toMatch(/^gho_/);
  });

  /** An RFC 7009 revocation through oauth4webapi, authenticated as `by` with HTTP Basic. */
  const revoke = (by: App, token: string, hint?: string) =>
    oauth.revocationRequest(
      server(),
      { client_id: by.clientId },
      oauth.ClientSecretBasic(by.clientSecret),
      token,
      { ...options, ...(hint ? { additionalParameters: { token_type_hint: hint } } : {}) },
    );

  it('RFC 7009: revoking the refresh token (oauth4webapi) revokes the family; another app cannot', async () => {
    const first = await deviceTokens();
    const refreshToken = String(first.refresh_token);
    // Another application, authenticated: 200 and nothing changes.
    await oauth.processRevocationResponse(await revoke(otherApp, refreshToken));
    expect(await userStatus(first.access_token)).toBe(200);

    await oauth.processRevocationResponse(await revoke(expiringApp, refreshToken, 'refresh_token'));
    expect(await userStatus(first.access_token)).toBe(401);
    expect((await refreshWithoutSecret(refreshToken)).body.error).toBe('bad_refresh_token');
    // Revoking it again is a no-op that still succeeds.
    expect((await revoke(expiringApp, refreshToken)).status).toBe(200);
  });

  it('RFC 7009: revoking a spent refresh token of a live family revokes the family too', async () => {
    const first = await deviceTokens();
    const second = await refreshWithoutSecret(String(first.refresh_token));
    const response = await fetch(`${stack.webUrl}/login/oauth/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: expiringApp.clientId,
        client_secret: expiringApp.clientSecret,
        token: String(first.refresh_token),
      }),
    });
    expect(response.status).toBe(200);
    expect(await userStatus(second.body.access_token)).toBe(401);
  });

  it('introspection says a refresh token is not active (it authenticates nothing)', async () => {
    const first = await deviceTokens();
    const response = await fetch(`${stack.webUrl}/login/oauth/introspect`, {
      method: 'POST',
      headers: {
        Accept: 'application/json',
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        client_id: expiringApp.clientId,
        client_secret: expiringApp.clientSecret,
        token: String(first.refresh_token),
      }),
    });
    expect(await response.json()).toEqual({ active: false });
  });
});

describe('the Enable Device Flow setting', () => {
  it('is off for a new application and the owner turns it on and off on the settings page', async () => {
    const owner = new WebClient(stack.webUrl);
    await owner.get('/login');
    await owner.post('/login', {
      login: 'owner',
      password: 'owner-pass-1',
      return_to: '/settings/developers',
    });
    const page = `/settings/developers/${disabledApp.clientId}`;
    expect((await owner.get(page)).status).toBe(200);
    expect(owner.lastHtml).toMatch(
      /<input type="checkbox" id="device_flow" name="device_flow" value="on" aria-describedby/,
    );
    const on = await owner.post(`${page}/device-flow`, { device_flow: 'on' });
    expect(on.status).toBe(303);
    await owner.get(on.headers.get('location') ?? '');
    expect(owner.lastHtml).toContain('Device Flow enabled');
    expect(owner.lastHtml).toMatch(/name="device_flow" value="on" checked aria-describedby/);
    expect((await requestCodes(disabledApp.clientId)).body.device_code).toMatch(/^[0-9a-f]{40}$/);
    expect((await owner.post(`${page}/device-flow`, {})).status).toBe(303);
    expect((await requestCodes(disabledApp.clientId)).body.error).toBe('device_flow_disabled');
    // Someone else's application is not found.
    const stranger = user.browser;
    await stranger.get('/settings/developers');
    expect((await stranger.post(`${page}/device-flow`, { device_flow: 'on' })).status).toBe(404);
  });
});
