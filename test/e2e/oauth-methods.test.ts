import {
  checkToken,
  deleteAuthorization,
  deleteToken,
  exchangeWebFlowCode,
  getWebFlowAuthorizationUrl,
  resetToken,
} from '@octokit/oauth-methods';
import { request } from '@octokit/request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, createUser } from '#test/fixtures';
import { startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/**
 * The web flow driven by @octokit/oauth-methods configured for GitHub Enterprise: it derives the
 * web host from the REST base URL by removing `/api/v3`. Its `checkToken`, `resetToken`,
 * `deleteToken` and `deleteAuthorization` use GitHub's token-in-body application routes (2020).
 */
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let app: Awaited<ReturnType<typeof createApp>>;
let owner: Awaited<ReturnType<typeof createUser>>;
const CALLBACK = 'https://octo-app.example/callback';

beforeAll(async () => {
  stack = await startTestStack();
  owner = await createUser(stack.endpointsFile, 'owner');
  app = await createApp(stack.endpointsFile, 'owner', 'Octo App', CALLBACK);
});
afterAll(async () => {
  await stack?.stop();
});

const hiddenFields = (page: string) =>
  Object.fromEntries(
    [...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
      .filter((match) => match[1] !== '_csrf')
      .map((match) => [match[1] ?? '', (match[2] ?? '').replaceAll('&amp;', '&')]),
  );

describe('@octokit/oauth-methods against the service (GitHub Enterprise configuration)', () => {
  it('builds the authorize URL, exchanges the code for a token, and the token works on the API', async () => {
    const octokitRequest = request.defaults({ baseUrl: stack.baseUrl });
    const redirectUrl = `${CALLBACK}/octokit`;
    const { url, state } = getWebFlowAuthorizationUrl({
      clientType: 'oauth-app',
      clientId: app.clientId,
      redirectUrl,
      scopes: ['repo', 'gist'],
      state: 'octo-state',
      request: octokitRequest,
    });
    expect(url.startsWith(`${stack.webUrl}/login/oauth/authorize?`)).toBe(true);
    expect(new URL(url).searchParams.get('scope')).toBe('repo,gist');

    // The user signs up, lands on the consent page and authorizes.
    const browser = new WebClient(stack.webUrl);
    await browser.get('/signup');
    await browser.post('/signup', {
      login: 'mona',
      email: 'mona@example.com',
      password: 'long-enough-pass-1',
    });
    const consent = await browser.get(url);
    expect(consent.status).toBe(200);
    expect(browser.lastHtml).toContain('Authorize Octo App');
    const decided = await browser.post('/login/oauth/authorize', {
      ...hiddenFields(browser.lastHtml),
      granted_scope: ['gist', 'repo'],
      decision: 'authorize',
    });
    expect(decided.status).toBe(303);
    const callback = new URL(decided.headers.get('location') ?? '');
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUrl);
    expect(callback.searchParams.get('state')).toBe(state);
    const code = callback.searchParams.get('code') ?? '';

    const { authentication } = await exchangeWebFlowCode({
      clientType: 'oauth-app',
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      code,
      redirectUrl,
      request: octokitRequest,
    });
    expect(authentication.token).toMatch(/^gho_[0-9A-Za-z]{36}$/);
    // GitHub answers `scope` comma-separated; this library splits it on whitespace, so one entry.
    expect(authentication.scopes).toEqual(['gist,repo']);

    const me = await octokitRequest('GET /user', {
      headers: { authorization: `token ${authentication.token}` },
    });
    expect(me.status).toBe(200);
    expect(me.data.login).toBe('mona');
    expect(me.headers['x-oauth-scopes']).toBe('gist, repo');

    // The library turns an OAuth error body (HTTP 200) into a RequestError of its own.
    await expect(
      exchangeWebFlowCode({
        clientType: 'oauth-app',
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        code,
        redirectUrl,
        request: octokitRequest,
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('bad_verification_code') });
    // That second exchange revoked the token.
    await expect(
      octokitRequest('GET /user', { headers: { authorization: `token ${authentication.token}` } }),
    ).rejects.toMatchObject({ status: 401 });
  });
});

/** A token of the app for the owner, made with the 2015 get-or-create route. */
async function appTokenOf(note: string): Promise<string> {
  const response = await fetch(`${stack.baseUrl}/authorizations/clients/${app.clientId}/${note}`, {
    method: 'PUT',
    headers: { Authorization: owner.auth },
    body: JSON.stringify({ client_secret: app.clientSecret, scopes: ['repo'], note }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

describe('@octokit/oauth-methods application methods (the token-in-body routes)', () => {
  const asApp = () => ({
    clientType: 'oauth-app' as const,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    request: request.defaults({ baseUrl: stack.baseUrl }),
  });
  const apiAs = (token: string) =>
    fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } }).then((r) => r.status);

  it('checkToken and resetToken: the token with its user; a reset token replaces the old one at once', async () => {
    const token = await appTokenOf('check-reset');
    const checked = await checkToken({ ...asApp(), token });
    expect(checked.status).toBe(200);
    expect(checked.data.user?.login).toBe('owner');
    expect(checked.authentication).toMatchObject({ token, scopes: ['repo'], clientId: app.clientId });

    const reset = await resetToken({ ...asApp(), token });
    expect(reset.status).toBe(200);
    expect(reset.authentication.token).toMatch(/^gho_/);
    expect(reset.authentication.token).not.toBe(token);
    expect(await apiAs(token)).toBe(401);
    expect(await apiAs(reset.authentication.token)).toBe(200);
    await expect(checkToken({ ...asApp(), token })).rejects.toMatchObject({ status: 404 });
    await expect(resetToken({ ...asApp(), token })).rejects.toMatchObject({ status: 404 });
  });

  it('deleteToken revokes the token; deleteAuthorization revokes the whole grant', async () => {
    const token = await appTokenOf('delete');
    const other = await appTokenOf('delete-other');
    expect((await deleteToken({ ...asApp(), token })).status).toBe(204);
    expect(await apiAs(token)).toBe(401);
    expect(await apiAs(other)).toBe(200);
    await expect(deleteToken({ ...asApp(), token })).rejects.toMatchObject({ status: 404 });

    const third = await appTokenOf('grant');
    expect((await deleteAuthorization({ ...asApp(), token: third })).status).toBe(204);
    expect(await apiAs(third)).toBe(401);
    expect(await apiAs(other)).toBe(401);
    await expect(deleteAuthorization({ ...asApp(), token: third })).rejects.toMatchObject({ status: 404 });
  });

  it('another application, a wrong secret or a token of no application: 404, as the path routes answer', async () => {
    const token = await appTokenOf('strangers');
    await expect(checkToken({ ...asApp(), clientSecret: 'wrong-secret', token })).rejects.toMatchObject({
      status: 404,
    });
    const stranger = await createApp(stack.endpointsFile, 'owner', 'Stranger App', CALLBACK);
    await expect(
      checkToken({ ...asApp(), clientId: stranger.clientId, clientSecret: stranger.clientSecret, token }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(checkToken({ ...asApp(), token: 'gho_not-a-token' })).rejects.toMatchObject({ status: 404 });
    expect(await apiAs(token)).toBe(200);
  });

  it("a body without a string access_token is 422 in GitHub's format, once the application is authenticated", async () => {
    for (const [method, path] of [
      ['POST', 'token'],
      ['PATCH', 'token'],
      ['DELETE', 'token'],
      ['DELETE', 'grant'],
    ] as const) {
      for (const body of ['{}', '{"access_token": 42}', '{"access_token": null}']) {
        const response = await fetch(`${stack.baseUrl}/applications/${app.clientId}/${path}`, {
          method,
          headers: { Authorization: app.basic },
          body,
        });
        expect(response.status, `${method} ${path} ${body}`).toBe(422);
        expect(await response.json()).toMatchObject({
          message: 'Validation Failed',
          errors: [{ field: 'access_token', code: body === '{}' ? 'missing_field' : 'invalid' }],
        });
      }
      const notJson = await fetch(`${stack.baseUrl}/applications/${app.clientId}/${path}`, {
        method,
        headers: { Authorization: app.basic },
        body: '[1]',
      });
      expect(notJson.status).toBe(400);
      const stranger = await fetch(`${stack.baseUrl}/applications/${app.clientId}/${path}`, {
        method,
        headers: { Authorization: `Basic ${Buffer.from(`${app.clientId}:wrong`).toString('base64')}` },
        body: '{}',
      });
      expect(stranger.status).toBe(404);
    }
  });
});
