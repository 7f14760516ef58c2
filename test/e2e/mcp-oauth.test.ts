import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '#test/browser';
import { createApp, createUser, signedUpUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';
import type { WebClient } from '#test/web-client';

/*
 * Issue 38's OAuth for MCP clients, through the public interface: resource indicators with
 * oauth4webapi, protected resource metadata, a Client ID Metadata Document client through consent
 * in Chromium, dynamic client registration, and CORS from another origin.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let app: Awaited<ReturnType<typeof createApp>>;
let web: string;
let mcp: string;
let browser: Browser;
/** A client's own site on 127.0.0.1: its metadata document, its callback, and a page for CORS. */
let site: {
  server: Server;
  origin: string;
  /** Documents by path, and how often each path was fetched. */
  documents: Map<string, unknown>;
  fetches: Map<string, number>;
};

const CALLBACK = 'https://app.example/callback';
const insecure = { [oauth.allowInsecureRequests]: true };
let users = 0;

function startSite(): Promise<typeof site> {
  const state = { documents: new Map<string, unknown>(), fetches: new Map<string, number>() };
  const server = createServer((request, response) => {
    const path = request.url ?? '';
    if (state.documents.has(path)) {
      state.fetches.set(path, (state.fetches.get(path) ?? 0) + 1);
      response.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=600' });
      response.end(JSON.stringify(state.documents.get(path)));
      return;
    }
    response.writeHead(200, { 'Content-Type': 'text/html' });
    response.end('<!doctype html><title>client</title><p>client page</p>');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      site = Object.assign(state, { server, origin });
      resolve(site);
    }),
  );
}

beforeAll(async () => {
  stack = await startTestStack();
  web = stack.webUrl.replace(/\/$/, '');
  mcp = `${web}/mcp`;
  await createUser(stack.endpointsFile, 'mcp-owner');
  app = await createApp(stack.endpointsFile, 'mcp-owner', 'Agent App', CALLBACK);
  const { setAppSwitch } = await import('#services/apps');
  await setAppSwitch(app.clientId, 'expireUserTokens', true);
  await startSite();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  site?.server.close();
  await stack?.stop();
});

const unescapeHtml = (text: string) =>
  text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, entity: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[entity] ?? '',
  );

/** Opens the consent page (or is sent straight on) and approves every ticked scope. */
async function approve(client: WebClient, authorizeUrl: URL): Promise<URL> {
  const page = await client.get(`${authorizeUrl.pathname}${authorizeUrl.search}`);
  if (page.status === 302 || page.status === 303) return new URL(page.headers.get('location') ?? 'missing:');
  expect(page.status, client.lastHtml).toBe(200);
  const hidden: Record<string, string> = {};
  for (const match of client.lastHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    if (match[1] !== '_csrf') hidden[match[1] ?? ''] = unescapeHtml(match[2] ?? '');
  const ticked = [
    ...client.lastHtml.matchAll(/<input type="checkbox" name="granted_scope" value="([^"]+)" checked/g),
  ].map((m) => m[1] ?? '');
  const decided = await client.post('/login/oauth/authorize', {
    ...hidden,
    granted_scope: ticked,
    decision: 'authorize',
  });
  expect(decided.status).toBe(303);
  return new URL(decided.headers.get('location') ?? 'missing:');
}

async function discover() {
  const issuer = new URL(web);
  return oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  );
}

/** The code flow with PKCE by oauth4webapi, for `client` at `redirect`, asking for `resource`. */
async function codeFlow(
  client: oauth.Client,
  auth: oauth.ClientAuth,
  redirect: string,
  resource: string | undefined,
  tokenResource: string | readonly string[] | undefined = resource,
) {
  const as = await discover();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const authorize = new URL(as.authorization_endpoint ?? '');
  authorize.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirect,
    response_type: 'code',
    scope: 'repo user',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...(resource ? { resource } : {}),
  }).toString();
  const user = await signedUpUser(web, `mcp-user-${++users}`);
  const callback = await approve(user.browser, authorize);
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirect, verifier, {
    ...insecure,
    ...(tokenResource
      ? {
          additionalParameters: new URLSearchParams(
            [tokenResource].flat().map((value): [string, string] => ['resource', value]),
          ),
        }
      : {}),
  });
  return { as, user, response };
}

const getUser = (token: string) =>
  fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `Bearer ${token}` } });

describe('RFC 9728 protected resource metadata', () => {
  it('names the MCP endpoint and the REST API as resources of this authorization server', async () => {
    for (const [path, resource] of [
      ['/.well-known/oauth-protected-resource/mcp', mcp],
      ['/.well-known/oauth-protected-resource/api/v3', stack.baseUrl.replace(/\/$/, '')],
    ] as const) {
      const response = await fetch(`${web}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      const doc = await json(response);
      expect(doc).toMatchObject({
        resource,
        authorization_servers: [web],
        bearer_methods_supported: ['header'],
      });
      expect(doc.scopes_supported).toContain('repo');
    }
  });

  it("answers the REST API's 401s with a Bearer challenge naming its metadata, as GitHub's body", async () => {
    const response = await fetch(`${stack.baseUrl}/user`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${web}/.well-known/oauth-protected-resource/api/v3"`,
    );
    expect(await json(response)).toMatchObject({ message: 'Requires authentication' });
  });

  it('advertises metadata documents and S256 in the RFC 8414 document', async () => {
    const as = await discover();
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.client_id_metadata_document_supported).toBe(true);
  });
});

describe('RFC 8707 resource indicators (oauth4webapi)', () => {
  it('binds a token to /mcp: refused by the REST API, refreshed only for /mcp', async () => {
    const client: oauth.Client = { client_id: app.clientId };
    const auth = oauth.ClientSecretBasic(app.clientSecret);
    const { as, response } = await codeFlow(client, auth, CALLBACK, mcp);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    expect(tokens.refresh_token).toBeTruthy();
    const refused = await getUser(tokens.access_token);
    expect(refused.status).toBe(401);
    expect(await json(refused)).toMatchObject({ message: 'Bad credentials' });

    // A refresh may not widen the grant to another resource.
    const widened = await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token ?? '', {
      ...insecure,
      additionalParameters: { resource: stack.baseUrl },
    });
    await expect(oauth.processRefreshTokenResponse(as, client, widened)).rejects.toMatchObject({
      error: 'invalid_target',
    });
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token ?? '', {
        ...insecure,
        additionalParameters: { resource: mcp },
      }),
    );
    expect((await getUser(refreshed.access_token)).status).toBe(401);
  });

  it("the MCP endpoint's check: an MCP token opens /mcp, a REST token does not and gets the Bearer challenge", async () => {
    const { authenticateForResource } = await import('#services/authenticate');
    const client: oauth.Client = { client_id: app.clientId };
    const auth = oauth.ClientSecretBasic(app.clientSecret);
    const event = (token: string) => ({
      headers: { Authorization: `Bearer ${token}`, Host: new URL(web).host },
      queryStringParameters: null,
      pathParameters: null,
    });
    const forMcp = await codeFlow(client, auth, CALLBACK, mcp);
    const mcpToken = (await oauth.processAuthorizationCodeResponse(forMcp.as, client, forMcp.response))
      .access_token;
    const caller = await authenticateForResource(event(mcpToken), mcp);
    expect(caller.user.login).toBe(forMcp.user.login);

    const forRest = await codeFlow(client, auth, CALLBACK, undefined);
    const restToken = (await oauth.processAuthorizationCodeResponse(forRest.as, client, forRest.response))
      .access_token;
    await expect(authenticateForResource(event(restToken), mcp)).rejects.toMatchObject({
      status: 401,
      details: {
        headers: {
          'WWW-Authenticate': `Bearer resource_metadata="${web}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`,
        },
      },
    });
  });

  it('a token asked for the REST API (or for nothing) opens it', async () => {
    const client: oauth.Client = { client_id: app.clientId };
    const auth = oauth.ClientSecretBasic(app.clientSecret);
    for (const resource of [stack.baseUrl, undefined]) {
      const { as, user, response } = await codeFlow(client, auth, CALLBACK, resource);
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
      const me = await getUser(tokens.access_token);
      expect(me.status).toBe(200);
      expect((await json(me)).login).toBe(user.login);
    }
  });

  it('invalid_target: a resource served elsewhere, another at the token endpoint, or several', async () => {
    const as = await discover();
    const user = await signedUpUser(web, `mcp-user-${++users}`);
    const authorize = new URL(as.authorization_endpoint ?? '');
    const verifier = oauth.generateRandomCodeVerifier();
    authorize.search = new URLSearchParams({
      client_id: app.clientId,
      scope: 'repo',
      state: 'st',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: 'https://elsewhere.example/mcp',
    }).toString();
    const redirected = await user.browser.get(`${authorize.pathname}${authorize.search}`);
    const location = new URL(redirected.headers.get('location') ?? 'missing:');
    expect(location.origin + location.pathname).toBe(CALLBACK);
    expect(location.searchParams.get('error')).toBe('invalid_target');
    expect(location.searchParams.get('state')).toBe('st');

    const client: oauth.Client = { client_id: app.clientId };
    const auth = oauth.ClientSecretBasic(app.clientSecret);
    const other = await codeFlow(client, auth, CALLBACK, mcp, stack.baseUrl);
    await expect(
      oauth.processAuthorizationCodeResponse(other.as, client, other.response),
    ).rejects.toMatchObject({
      error: 'invalid_target',
    });

    const several = await codeFlow(client, auth, CALLBACK, mcp, [mcp, stack.baseUrl]);
    await expect(
      oauth.processAuthorizationCodeResponse(several.as, client, several.response),
    ).rejects.toMatchObject({
      error: 'invalid_target',
    });
  });
});

describe('Client ID Metadata Documents', () => {
  it('fetches the document through the guard and shows the client as not registered, with its host, in Chromium', async () => {
    const clientId = `${site.origin}/client.json`;
    const redirect = `${site.origin}/callback`;
    site.documents.set('/client.json', {
      client_id: clientId,
      client_name: 'Local Agent',
      redirect_uris: [redirect],
      token_endpoint_auth_method: 'none',
    });
    const as = await discover();
    const verifier = oauth.generateRandomCodeVerifier();
    const authorize = new URL(as.authorization_endpoint ?? '');
    authorize.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirect,
      response_type: 'code',
      scope: 'repo',
      state: 'cimd',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: mcp,
    }).toString();
    const login = `cimd-${++users}`;
    await createUser(stack.endpointsFile, login, 'long-enough-pass-1');
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(authorize.href);
      await page.getByLabel('Username', { exact: true }).fill(login);
      await page.getByLabel('Password', { exact: true }).fill('long-enough-pass-1');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname === '/login/oauth/authorize');
      const main = (await page.getByRole('main').textContent()) ?? '';
      expect(main).toContain('Local Agent');
      expect(main).toContain('not registered here');
      expect(main).toContain(new URL(site.origin).host);
      await page.getByRole('button', { name: 'Authorize Local Agent' }).click();
      await page.waitForURL((url) => url.origin === site.origin);
      const landed = new URL(page.url());
      const client: oauth.Client = { client_id: clientId, token_endpoint_auth_method: 'none' };
      const params = oauth.validateAuthResponse(as, client, landed, 'cimd');
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirect, verifier, {
          ...insecure,
          additionalParameters: { resource: mcp },
        }),
      );
      expect(tokens.access_token).toMatch(/^gho_/);
      expect(tokens.refresh_token).toBeTruthy();
      // An MCP token: the REST API refuses it.
      expect((await getUser(tokens.access_token)).status).toBe(401);
      // The grant is listed by the client's name, marked as a client not registered here.
      await page.goto(`${web}/settings/connections/applications`);
      await page.getByRole('link', { name: 'Local Agent' }).click();
      await page.waitForURL((url) => url.pathname.startsWith('/settings/connections/applications/'));
      const review = (await page.getByRole('main').textContent()) ?? '';
      expect(review).toContain('Not registered here');
      expect(review).toContain(clientId);
    } finally {
      await context.close();
    }
  });

  it('keeps a fetched document while its Cache-Control says; refuses PKCE-less requests, mismatched, oversized and private documents', async () => {
    const user = await signedUpUser(web, `cimd-user-${++users}`);
    const authorize = (clientId: string, extra: Record<string, string> = {}) =>
      user.browser.get(
        `/login/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: `${site.origin}/callback`, ...extra })}`,
      );
    const pkce = {
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    };

    // Fetched by the first test, fresh for max-age=600: no fetch, and no PKCE is refused.
    const before = site.fetches.get('/client.json') ?? 0;
    expect((await authorize(`${site.origin}/client.json`)).status).toBe(400);
    expect(user.browser.lastHtml).toContain('code_challenge');
    expect((await authorize(`${site.origin}/client.json`, pkce)).status).toBe(200);
    expect(site.fetches.get('/client.json') ?? 0).toBe(before);

    site.documents.set('/other.json', {
      client_id: `${site.origin}/elsewhere.json`,
      redirect_uris: [`${site.origin}/callback`],
    });
    expect((await authorize(`${site.origin}/other.json`, pkce)).status).toBe(400);
    expect(user.browser.lastHtml).toContain('names another client_id');

    site.documents.set('/large.json', {
      client_id: `${site.origin}/large.json`,
      redirect_uris: [`${site.origin}/callback`],
      client_name: 'x'.repeat(6000),
    });
    expect((await authorize(`${site.origin}/large.json`, pkce)).status).toBe(400);
    expect(user.browser.lastHtml).toContain('larger than');

    site.documents.set('/secret.json', {
      client_id: `${site.origin}/secret.json`,
      redirect_uris: [`${site.origin}/callback`],
      client_secret: 'shh',
    });
    expect((await authorize(`${site.origin}/secret.json`, pkce)).status).toBe(400);

    // A private address is refused by the guard before any connection (10.0.0.0/8 is not allowed).
    expect((await authorize('https://10.255.255.1/client.json', pkce)).status).toBe(400);
    expect(user.browser.lastHtml).toContain('could not be fetched');
    // http only for the loopback addresses the local stack may reach; a query is never a client id.
    expect((await authorize('http://app.example/client.json', pkce)).status).toBe(400);
    expect(user.browser.lastHtml).toContain('not a valid client metadata document URL');
    expect((await authorize(`${site.origin}/client.json?x=1`, pkce)).status).toBe(400);
  });

  it('fetches at most 30 documents per caller address per five minutes, then answers 429', async () => {
    const user = await signedUpUser(web, `cimd-user-${++users}`);
    let status = 400;
    let tries = 0;
    for (; tries < 40 && status !== 429; tries++)
      status = (
        await user.browser.get(
          `/login/oauth/authorize?${new URLSearchParams({ client_id: `${site.origin}/none-${tries}.json` })}`,
        )
      ).status;
    expect(status).toBe(429);
    // The earlier tests of this file fetched a few documents from the same address already.
    expect(tries).toBeLessThanOrEqual(31);
    expect(user.browser.lastHtml).toContain('Too many client metadata documents');
  });
});

describe('Dynamic Client Registration (RFC 7591)', () => {
  const register = (body: unknown) =>
    fetch(`${web}/login/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('is off by default: 404, and no registration_endpoint', async () => {
    expect((await register({ redirect_uris: ['http://127.0.0.1/cb'] })).status).toBe(404);
    expect((await discover()).registration_endpoint).toBeUndefined();
  });

  it('turned on: registers a public client that completes a PKCE flow, with RFC 7591 errors and a rate limit', async () => {
    const { setDynamicRegistration } = await import('#services/public-clients');
    await setDynamicRegistration(true);
    const as = await discover();
    expect(as.registration_endpoint).toBe(`${web}/login/oauth/register`);

    const badUri = await register({ redirect_uris: ['http://app.example/cb'] });
    expect(badUri.status).toBe(400);
    expect(await json(badUri)).toMatchObject({ error: 'invalid_redirect_uri' });
    const badGrant = await register({ redirect_uris: ['http://127.0.0.1/cb'], grant_types: ['password'] });
    expect(await json(badGrant)).toMatchObject({ error: 'invalid_client_metadata' });

    const redirect = 'http://127.0.0.1:33418/callback';
    const created = await register({ client_name: 'Registered Agent', redirect_uris: [redirect] });
    expect(created.status).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe('*');
    const registered = await json(created);
    expect(registered).toMatchObject({ client_name: 'Registered Agent', token_endpoint_auth_method: 'none' });
    expect(registered.client_secret).toBeUndefined();

    const client: oauth.Client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
    const { response } = await codeFlow(client, oauth.None(), redirect, mcp);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    expect(tokens.access_token).toMatch(/^gho_/);

    let status = 201;
    for (let i = 0; i < 12 && status === 201; i++)
      status = (await register({ redirect_uris: ['http://127.0.0.1/cb'] })).status;
    expect(status).toBe(429);
  });
});

describe('CORS for browser-based public clients', () => {
  it('answers the preflight in front of the function, and the answers carry no credentials', async () => {
    for (const path of [
      '/login/oauth/access_token',
      '/login/oauth/revoke',
      '/login/device/code',
      '/login/oauth/register',
    ]) {
      const preflight = await fetch(`${web}${path}`, {
        method: 'OPTIONS',
        headers: {
          Origin: 'http://127.0.0.1:6274',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type',
        },
      });
      expect(preflight.status, path).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('Content-Type');
      expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    }
    const token = await fetch(`${web}/login/oauth/access_token`, {
      method: 'POST',
      headers: { Accept: 'application/json' },
    });
    expect(token.headers.get('access-control-allow-origin')).toBe('*');
    expect(token.headers.get('access-control-allow-credentials')).toBeNull();
    expect(token.headers.get('set-cookie')).toBeNull();
  });

  it('a page on another origin reads the metadata and the token endpoint with fetch()', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${site.origin}/inspector`);
      const result = await page.evaluate(async (webOrigin) => {
        const metadata = (await (
          await fetch(`${webOrigin}/.well-known/oauth-authorization-server`)
        ).json()) as {
          issuer: string;
          token_endpoint: string;
        };
        const resource = (await (
          await fetch(`${webOrigin}/.well-known/oauth-protected-resource/mcp`)
        ).json()) as {
          resource: string;
        };
        const token = await fetch(metadata.token_endpoint, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
          body: JSON.stringify({ client_id: 'nobody', code: 'x', grant_type: 'authorization_code' }),
        });
        return { issuer: metadata.issuer, resource: resource.resource, token: await token.json() };
      }, web);
      expect(result).toMatchObject({
        issuer: web,
        resource: mcp,
        token: { error: 'incorrect_client_credentials' },
      });
    } finally {
      await context.close();
    }
  });
});
