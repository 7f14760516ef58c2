import * as oauth from 'oauth4webapi';
import * as openid from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '#domain/scopes';
import { ROUTES } from '#shared/routes';
import { admin } from '#test/admin';
import { createApp, createUser, personalToken, signedUpUser } from '#test/fixtures';
import { basicAuth, json, startTestStack } from '#test/stack';
import type { WebClient } from '#test/web-client';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type App = Awaited<ReturnType<typeof createApp>>;
let stack: Stack;
let app: App;
let otherApp: App;

const CALLBACK = 'https://app.example/callback';
const METADATA_PATH = '/.well-known/oauth-authorization-server';

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'hubot');
  app = await createApp(stack.endpointsFile, 'hubot', 'Standard App', CALLBACK);
  otherApp = await createApp(stack.endpointsFile, 'hubot', 'Other App', 'https://other.example/cb');
});
afterAll(async () => {
  await stack?.stop();
});

let users = 0;

const unescapeHtml = (text: string) =>
  text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, entity: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[entity] ?? '',
  );

/** Opens the consent page at `authorizeUrl` and approves every ticked scope, as the user would. */
async function approve(browser: WebClient, authorizeUrl: URL): Promise<URL> {
  const page = await browser.get(`${authorizeUrl.pathname}${authorizeUrl.search}`);
  expect(page.status, browser.lastHtml).toBe(200);
  const hidden: Record<string, string> = {};
  for (const match of browser.lastHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    if (match[1] !== '_csrf') hidden[match[1] ?? ''] = unescapeHtml(match[2] ?? '');
  const ticked = [
    ...browser.lastHtml.matchAll(/<input type="checkbox" name="granted_scope" value="([^"]+)" checked/g),
  ].map((m) => m[1] ?? '');
  const decided = await browser.post('/login/oauth/authorize', {
    ...hidden,
    granted_scope: ticked,
    decision: 'authorize',
  });
  expect(decided.status).toBe(303);
  return new URL(decided.headers.get('location') ?? 'missing:');
}

/** A token of `which` for a new user, by the web flow with the service's own endpoints. */
async function webFlowToken(which: App, scope = 'repo user'): Promise<{ token: string; login: string }> {
  const user = await signedUpUser(stack.webUrl, `std-user-${++users}`);
  const authorize = new URL('/login/oauth/authorize', stack.webUrl);
  authorize.search = new URLSearchParams({ client_id: which.clientId, scope, state: 's' }).toString();
  const code = (await approve(user.browser, authorize)).searchParams.get('code') ?? '';
  const response = await fetch(new URL('/login/oauth/access_token', stack.webUrl), {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: which.clientId, client_secret: which.clientSecret, code }),
  });
  const body = await json(response);
  expect(body.access_token, JSON.stringify(body)).toBeTruthy();
  return { token: body.access_token as string, login: user.login };
}

type Auth = 'basic' | 'body';
/** POST to a standard endpoint with the client's credentials the way `auth` says. */
function post(
  path: string,
  params: Record<string, string>,
  client: { clientId: string; clientSecret: string },
  auth: Auth = 'basic',
  headers: Record<string, string> = {},
) {
  const body = new URLSearchParams(
    auth === 'body' ? { client_id: client.clientId, client_secret: client.clientSecret, ...params } : params,
  );
  return fetch(new URL(path, stack.webUrl), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      ...(auth === 'basic' ? { Authorization: basicAuth(client.clientId, client.clientSecret) } : {}),
      ...headers,
    },
    body,
  });
}
const introspect = (token: string, client: App = app, auth: Auth = 'basic') =>
  post('/login/oauth/introspect', { token }, client, auth);
const revoke = (token: string, client: App = app, auth: Auth = 'basic') =>
  post('/login/oauth/revoke', { token }, client, auth);
const getUser = (token: string) =>
  fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } });

async function expectStandardJson(response: Response, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(response.headers.get('cache-control')).toBe('no-store');
  return json(response);
}

describe('GET /.well-known/oauth-authorization-server', () => {
  it('names the web origin as issuer and every endpoint under it', async () => {
    const response = await fetch(new URL(METADATA_PATH, stack.webUrl));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
    const doc = await json(response);
    const web = stack.webUrl.replace(/\/$/, '');
    expect(doc).toMatchObject({
      issuer: web,
      authorization_endpoint: `${web}/login/oauth/authorize`,
      token_endpoint: `${web}/login/oauth/access_token`,
      device_authorization_endpoint: `${web}/login/device/code`,
      revocation_endpoint: `${web}/login/oauth/revoke`,
      introspection_endpoint: `${web}/login/oauth/introspect`,
      response_types_supported: ['code'],
      grant_types_supported: [
        'authorization_code',
        'urn:ietf:params:oauth:grant-type:device_code',
        'refresh_token',
      ],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
    expect(doc.scopes_supported).toEqual(Object.keys(SCOPES));
    expect(doc.scopes_supported).toEqual(expect.arrayContaining(['repo', 'user', 'admin:public_key']));
    expect(new URL(doc.service_documentation).protocol).toBe('https:');
  });

  it('names endpoints that answer (each routed: never 404)', async () => {
    const doc = await json(await fetch(new URL(METADATA_PATH, stack.webUrl)));
    const endpoints = Object.entries(doc).filter(
      ([name]) => name.endsWith('_endpoint') && name !== 'device_authorization_endpoint',
    );
    expect(endpoints).toHaveLength(4);
    for (const [name, url] of endpoints) {
      const method = name === 'authorization_endpoint' ? 'GET' : 'POST';
      const response = await fetch(url as string, { method, redirect: 'manual' });
      expect([200, 302, 400, 401], `${name} ${response.status}`).toContain(response.status);
    }
    // The device endpoint's route comes with the device flow; once it is in the table it must answer too.
    const device = new URL(doc.device_authorization_endpoint);
    if (ROUTES.some((route) => route.method === 'POST' && route.path === device.pathname)) {
      const response = await fetch(device, { method: 'POST' });
      expect(response.status).not.toBe(404);
    } else expect(device.pathname).toBe('/login/device/code');
  });

  it('reads no credentials: a wrong password costs nothing', async () => {
    const response = await fetch(new URL(METADATA_PATH, stack.webUrl), {
      headers: { Authorization: basicAuth('hubot', 'wrong') },
    });
    expect(response.status).toBe(200);
  });
});

describe('oauth4webapi against the discovered endpoints', () => {
  it('discovers, runs the PKCE code flow, introspects and revokes', async () => {
    const issuer = new URL(stack.webUrl);
    const insecure = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    const client: oauth.Client = { client_id: app.clientId };
    const clientAuth = oauth.ClientSecretBasic(app.clientSecret);

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorize = new URL(as.authorization_endpoint ?? '');
    authorize.search = new URLSearchParams({
      client_id: app.clientId,
      redirect_uri: CALLBACK,
      response_type: 'code',
      scope: 'repo user',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const user = await signedUpUser(stack.webUrl, `std-user-${++users}`);
    const callback = await approve(user.browser, authorize);
    const params = oauth.validateAuthResponse(as, client, callback, state);

    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, CALLBACK, verifier, insecure),
    );
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('repo,user');
    const token = tokens.access_token;
    expect((await getUser(token)).status).toBe(200);

    const active = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, clientAuth, token, insecure),
    );
    expect(active).toMatchObject({
      active: true,
      scope: 'repo user',
      client_id: app.clientId,
      username: user.login,
      token_type: 'bearer',
    });
    expect(Math.abs((active.iat ?? 0) - Date.now() / 1000)).toBeLessThan(60);
    expect(active.exp).toBeUndefined();

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, clientAuth, token, insecure),
    );
    const after = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, oauth.ClientSecretPost(app.clientSecret), token, insecure),
    );
    expect(after).toEqual({ active: false });
    expect((await getUser(token)).status).toBe(401);
  });
});

describe('openid-client with the RFC 8414 document', () => {
  it('discovers, introspects and revokes', async () => {
    const { token, login } = await webFlowToken(app);
    const config = await openid.discovery(new URL(stack.webUrl), app.clientId, app.clientSecret, undefined, {
      algorithm: 'oauth2',
      execute: [openid.allowInsecureRequests],
    });
    expect(config.serverMetadata().introspection_endpoint).toBe(
      `${stack.webUrl.replace(/\/$/, '')}/login/oauth/introspect`,
    );
    expect(await openid.tokenIntrospection(config, token)).toMatchObject({
      active: true,
      username: login,
      client_id: app.clientId,
    });
    await openid.tokenRevocation(config, token);
    expect(await openid.tokenIntrospection(config, token)).toEqual({ active: false });
    expect((await getUser(token)).status).toBe(401);
  });
});

describe('POST /login/oauth/introspect', () => {
  it('answers the same with Basic and with the credentials in the body', async () => {
    const { token, login } = await webFlowToken(app, 'user');
    for (const auth of ['basic', 'body'] as const) {
      const body = await expectStandardJson(await introspect(token, app, auth), 200);
      expect(body).toMatchObject({ active: true, scope: 'user', username: login, client_id: app.clientId });
      expect(Number.isInteger(body.iat)).toBe(true);
    }
  });

  it.each([
    ['an unknown well-formed token', 'gho_16C7e42F292c6912E7710c838347Ae178B4a'],
    ['a malformed token', 'not-a-token'],
    ['a huge token', 'x'.repeat(100_000)],
  ])('says inactive for %s', async (_, token) => {
    expect(await expectStandardJson(await introspect(token), 200)).toEqual({ active: false });
  });

  it("says inactive for another application's token and for a personal access token", async () => {
    const { token } = await webFlowToken(otherApp);
    expect(await expectStandardJson(await introspect(token), 200)).toEqual({ active: false });
    const hubot = basicAuth('hubot', 'hubot-pass-1');
    const personal = await personalToken(stack.baseUrl, hubot, ['repo']);
    expect(await expectStandardJson(await introspect(personal.token), 200)).toEqual({ active: false });
  });

  it("says inactive for a suspended application's tokens", async () => {
    const suspended = await createApp(stack.endpointsFile, 'hubot', 'Suspended', 'https://s.example/cb');
    const { token } = await webFlowToken(suspended);
    expect((await json(await introspect(token, suspended))).active).toBe(true);
    expect((await admin(stack.endpointsFile, 'app', 'suspend', suspended.clientId)).code).toBe(0);
    expect(await expectStandardJson(await introspect(token, suspended), 200)).toEqual({ active: false });
  });
});

describe('POST /login/oauth/revoke', () => {
  it("answers 200 and changes nothing for another application's token", async () => {
    const { token } = await webFlowToken(otherApp);
    expect(await expectStandardJson(await revoke(token, app), 200)).toEqual({});
    expect((await getUser(token)).status).toBe(200);
    expect((await json(await introspect(token, otherApp))).active).toBe(true);
  });

  it('answers 200 for an unknown, a malformed or a personal token', async () => {
    const personal = await personalToken(stack.baseUrl, basicAuth('hubot', 'hubot-pass-1'), ['user']);
    for (const token of ['gho_16C7e42F292c6912E7710c838347Ae178B4a', 'garbage', personal.token])
      expect(await expectStandardJson(await revoke(token, app, 'body'), 200)).toEqual({});
    expect((await getUser(personal.token)).status).toBe(200);
  });

  it('revokes with the credentials in the body, and ignores token_type_hint', async () => {
    const { token } = await webFlowToken(app);
    const response = await post(
      '/login/oauth/revoke',
      { token, token_type_hint: 'no_such_type' },
      app,
      'body',
    );
    expect(await expectStandardJson(response, 200)).toEqual({});
    expect((await getUser(token)).status).toBe(401);
    // Revoking it again is no error either.
    expect((await revoke(token)).status).toBe(200);
  });
});

describe('both endpoints: client authentication and bad input', () => {
  const endpoints = ['/login/oauth/revoke', '/login/oauth/introspect'];

  it.each(endpoints)(
    '%s: a wrong secret is 401 invalid_client, with a Basic challenge for Basic',
    async (path) => {
      const { token } = await webFlowToken(app);
      const wrong = { clientId: app.clientId, clientSecret: 'f'.repeat(40) };
      const basic = await post(path, { token }, wrong, 'basic');
      expect((await expectStandardJson(basic, 401)).error).toBe('invalid_client');
      expect(basic.headers.get('www-authenticate')).toMatch(/^Basic /);
      const body = await post(path, { token }, wrong, 'body');
      expect((await expectStandardJson(body, 401)).error).toBe('invalid_client');
      expect(body.headers.get('www-authenticate')).toBeNull();
      const none = await fetch(new URL(path, stack.webUrl), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      });
      expect((await expectStandardJson(none, 401)).error).toBe('invalid_client');
      const unknown = await post(path, { token }, { clientId: 'a'.repeat(20), clientSecret: 'x' }, 'basic');
      expect((await expectStandardJson(unknown, 401)).error).toBe('invalid_client');
      // Nothing was revoked by the failed calls.
      expect((await getUser(token)).status).toBe(200);
    },
  );

  it.each(endpoints)('%s: a missing token is 400 invalid_request', async (path) => {
    for (const auth of ['basic', 'body'] as const) {
      const body = await expectStandardJson(await post(path, {}, app, auth), 400);
      expect(body.error).toBe('invalid_request');
    }
  });

  it.each(endpoints)('%s: odd bodies and headers never make a 5xx', async (path) => {
    const { token } = await webFlowToken(app, 'user');
    const basic = { Authorization: app.basic };
    const cases: { headers: Record<string, string>; body: string; status: number[] }[] = [
      {
        headers: { ...basic, 'Content-Type': 'application/json' },
        body: JSON.stringify({ token }),
        status: [200],
      },
      { headers: { ...basic, 'Content-Type': 'application/json' }, body: '{"token":', status: [400] },
      { headers: { ...basic, 'Content-Type': 'application/json' }, body: '[1,2]', status: [400] },
      { headers: { ...basic, 'Content-Type': 'application/json' }, body: '{"token":7}', status: [400] },
      { headers: { ...basic, 'Content-Type': 'text/plain' }, body: `token=${token}`, status: [200] },
      { headers: { ...basic, 'Content-Type': 'application/xml' }, body: '<token/>', status: [400] },
      { headers: basic, body: `token=${'%ZZ'.repeat(10)}`, status: [200] },
      { headers: basic, body: `token=${'a'.repeat(2 * 1024 * 1024)}`, status: [413] },
      { headers: basic, body: `token=garbage&token=${token}`, status: [200] },
      { headers: { Authorization: 'Basic !!!' }, body: `token=${token}`, status: [401] },
      { headers: { Authorization: `Bearer ${token}` }, body: `token=${token}`, status: [401] },
      {
        headers: basic,
        body: `client_id=${otherApp.clientId}&token=${token}`,
        status: [401],
      },
    ];
    for (const { headers, body, status } of cases) {
      const response = await fetch(new URL(path, stack.webUrl), { method: 'POST', headers, body });
      expect(status, `${JSON.stringify(headers)} ${body.slice(0, 40)} → ${response.status}`).toContain(
        response.status,
      );
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-store');
      await response.arrayBuffer();
    }
    // Introspection never revoked it; revocation (with JSON first) did.
    expect((await getUser(token)).status).toBe(path.endsWith('revoke') ? 401 : 200);
  });

  it('takes the token from the body only, never from the query string', async () => {
    const { token } = await webFlowToken(app);
    const response = await fetch(
      new URL(`/login/oauth/revoke?${new URLSearchParams({ token })}`, stack.webUrl),
      { method: 'POST', headers: { Authorization: app.basic } },
    );
    expect((await expectStandardJson(response, 400)).error).toBe('invalid_request');
    expect((await getUser(token)).status).toBe(200);
  });
});
