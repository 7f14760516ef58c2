import { exchangeWebFlowCode, getWebFlowAuthorizationUrl } from '@octokit/oauth-methods';
import { request } from '@octokit/request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, createUser } from '#test/fixtures';
import { startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/**
 * The web flow driven by @octokit/oauth-methods configured for GitHub Enterprise: it derives the
 * web host from the REST base URL by removing `/api/v3`. Its `checkToken` uses
 * `POST /applications/{client_id}/token`, which this service does not implement (spec §4.3 has
 * `GET /applications/:client_id/tokens/:access_token`), so it is not exercised here.
 */
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let app: Awaited<ReturnType<typeof createApp>>;
const CALLBACK = 'https://octo-app.example/callback';

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'owner');
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
