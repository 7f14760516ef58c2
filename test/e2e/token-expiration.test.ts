import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { createApp, createUser, signedUpUser } from '#test/fixtures';
import { deviationsFrom } from '#test/github-openapi';
import { basicAuth, json, startTestStack } from '#test/stack';
import type { WebClient } from '#test/web-client';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type App = { clientId: string; clientSecret: string };
let stack: Stack;
let app: App;
let otherApp: App;

const EIGHT_HOURS = 28_800;
const SIX_MONTHS = 15_897_600;
const PASSWORD = 'long-enough-pass-1';

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'hubot');
  app = await createApp(stack.endpointsFile, 'hubot', 'Expiring App');
  otherApp = await createApp(stack.endpointsFile, 'hubot', 'Other App');
  const enabled = await admin(stack.endpointsFile, 'app', 'token-expiration', 'enable', otherApp.clientId);
  expect(enabled.code, enabled.stderr).toBe(0);
});
afterAll(async () => {
  await stack?.stop();
});

let users = 0;

/** The consent form's hidden fields (the CSRF token aside), as a browser sends them back. */
const hiddenFields = (page: string): Record<string, string> =>
  Object.fromEntries(
    [...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
      .filter((m) => m[1] !== '_csrf')
      .map((m) => [m[1] ?? '', (m[2] ?? '').replace(/&amp;/g, '&')]),
  );

/** A code of `target` for a new user who approves it on the consent page. */
async function codeFor(target: App, browser?: WebClient) {
  const user = browser ? { browser } : await signedUpUser(stack.webUrl, `user-${++users}`, PASSWORD);
  const page = await user.browser.get(
    `/login/oauth/authorize?${new URLSearchParams({ client_id: target.clientId, scope: 'gist' })}`,
  );
  expect(page.status, user.browser.lastHtml).toBe(200);
  const decided = await user.browser.post('/login/oauth/authorize', {
    ...hiddenFields(user.browser.lastHtml),
    granted_scope: ['gist'],
    decision: 'authorize',
  });
  expect(decided.status).toBe(303);
  return new URL(decided.headers.get('location') ?? '').searchParams.get('code') ?? '';
}

const tokenEndpoint = (params: Record<string, string>, accept = 'application/json') =>
  fetch(`${stack.webUrl}/login/oauth/access_token`, {
    method: 'POST',
    headers: { Accept: accept, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });

async function exchange(target: App, accept = 'application/json') {
  const code = await codeFor(target);
  return tokenEndpoint({ client_id: target.clientId, client_secret: target.clientSecret, code }, accept);
}

async function tokensOf(target: App) {
  const response = await exchange(target);
  expect(response.status).toBe(200);
  return json(response);
}

function refresh(target: App, refreshToken: string | undefined, secret = target.clientSecret) {
  return tokenEndpoint({
    grant_type: 'refresh_token',
    client_id: target.clientId,
    client_secret: secret,
    ...(refreshToken !== undefined ? { refresh_token: refreshToken } : {}),
  });
}

const userStatus = async (token: string) =>
  (await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } })).status;

const checkToken = (target: App, token: string, method = 'GET') =>
  fetch(`${stack.baseUrl}/applications/${target.clientId}/tokens/${token}`, {
    method,
    headers: { Authorization: basicAuth(target.clientId, target.clientSecret) },
  });

const secondsUntil = (iso: string) => (Date.parse(iso) - Date.now()) / 1000;

describe('expiring user tokens off (the default)', () => {
  it('answers as before: no expires_in, no refresh token, no expires_at', async () => {
    const body = await tokensOf(app);
    expect(Object.keys(body)).toEqual(['access_token', 'scope', 'token_type']);
    expect(body.access_token).toMatch(/^gho_/);
    const checked = await checkToken(app, body.access_token);
    expect(checked.status).toBe(200);
    expect(await json(checked)).not.toHaveProperty('expires_at');
  });
});

describe('expiring user tokens on', () => {
  it('answers expires_in, a ghr_ refresh token and refresh_token_expires_in as JSON numbers, form and XML', async () => {
    const body = await tokensOf(otherApp);
    expect(Object.keys(body)).toEqual([
      'access_token',
      'expires_in',
      'refresh_token',
      'refresh_token_expires_in',
      'scope',
      'token_type',
    ]);
    expect(body).toMatchObject({
      expires_in: EIGHT_HOURS,
      refresh_token_expires_in: SIX_MONTHS,
      scope: 'gist',
      token_type: 'bearer',
    });
    expect(body.refresh_token).toMatch(/^ghr_[0-9A-Za-z]{36}$/);

    const form = new URLSearchParams(
      await (await exchange(otherApp, 'application/x-www-form-urlencoded')).text(),
    );
    expect(form.get('expires_in')).toBe(String(EIGHT_HOURS));
    expect(form.get('refresh_token')).toMatch(/^ghr_/);
    expect(form.get('refresh_token_expires_in')).toBe(String(SIX_MONTHS));

    const xml = await (await exchange(otherApp, 'application/xml')).text();
    expect(xml).toMatch(
      /^<OAuth><token_type>bearer<\/token_type><scope>gist<\/scope><access_token>gho_\w+<\/access_token><expires_in>28800<\/expires_in><refresh_token>ghr_\w+<\/refresh_token><refresh_token_expires_in>15897600<\/refresh_token_expires_in><\/OAuth>$/,
    );
  });

  it('shows expires_at on check, reset and GET /authorizations/:id', async () => {
    const user = await signedUpUser(stack.webUrl, `user-${++users}`, PASSWORD);
    const code = await codeFor(otherApp, user.browser);
    const body = await json(
      await tokenEndpoint({ client_id: otherApp.clientId, client_secret: otherApp.clientSecret, code }),
    );
    const checked = await json(await checkToken(otherApp, body.access_token));
    expect(deviationsFrom('GET', '/applications/{client_id}/tokens/{access_token}', 200, checked)).toEqual(
      [],
    );
    expect(checked.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(secondsUntil(checked.expires_at)).toBeGreaterThan(EIGHT_HOURS - 60);
    expect(secondsUntil(checked.expires_at)).toBeLessThanOrEqual(EIGHT_HOURS);

    const reset = await checkToken(otherApp, body.access_token, 'POST');
    expect(reset.status).toBe(200);
    const resetBody = await json(reset);
    expect(resetBody.expires_at).toBe(checked.expires_at); // a reset replaces the secret, not the lifetime

    const fetched = await fetch(`${stack.baseUrl}/authorizations/${checked.id}`, {
      headers: { Authorization: user.auth },
    });
    expect(fetched.status).toBe(200);
    expect((await json(fetched)).expires_at).toBe(checked.expires_at);
  });

  it('refreshes with an unmodified client (oauth4webapi): new tokens, and the old access token stops working', async () => {
    const first = await tokensOf(otherApp);
    const server: oauth.AuthorizationServer = {
      issuer: stack.webUrl,
      token_endpoint: `${stack.webUrl}/login/oauth/access_token`,
    };
    const client: oauth.Client = { client_id: otherApp.clientId };
    const response = await oauth.refreshTokenGrantRequest(
      server,
      client,
      oauth.ClientSecretPost(otherApp.clientSecret),
      first.refresh_token,
      { [oauth.allowInsecureRequests]: true },
    );
    const second = await oauth.processRefreshTokenResponse(server, client, response);
    expect(second.access_token).toMatch(/^gho_/);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).toMatch(/^ghr_/);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.expires_in).toBe(EIGHT_HOURS);
    expect(second.scope).toBe('gist');

    expect(await userStatus(second.access_token)).toBe(200);
    expect(await userStatus(first.access_token)).toBe(401);
    expect((await checkToken(otherApp, first.access_token)).status).toBe(404);
    // A refresh token never authenticates a request itself.
    expect(await userStatus(String(second.refresh_token))).toBe(401);
  });

  it('a spent refresh token presented again revokes the family: bad_refresh_token, and the newest tokens die', async () => {
    const first = await tokensOf(otherApp);
    const second = await json(await refresh(otherApp, first.refresh_token));
    const third = await json(await refresh(otherApp, second.refresh_token));
    expect(await userStatus(third.access_token)).toBe(200);

    const reused = await json(await refresh(otherApp, first.refresh_token));
    expect(reused).toMatchObject({
      error: 'bad_refresh_token',
      error_description: 'The refresh token passed is incorrect or expired.',
    });
    expect(await userStatus(third.access_token)).toBe(401);
    expect((await json(await refresh(otherApp, third.refresh_token))).error).toBe('bad_refresh_token');
  });

  it('of two concurrent refreshes with one token exactly one gets tokens; the other is a reuse', async () => {
    const first = await tokensOf(otherApp);
    const answers = await Promise.all([
      refresh(otherApp, first.refresh_token).then(json),
      refresh(otherApp, first.refresh_token).then(json),
    ]);
    const winners = answers.filter((a) => typeof a.access_token === 'string');
    const losers = answers.filter((a) => a.error === 'bad_refresh_token');
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    // The loser presented a spent token: the family, with the winner's new token, is revoked.
    expect(await userStatus(winners[0].access_token)).toBe(401);
    expect((await json(await refresh(otherApp, winners[0].refresh_token))).error).toBe('bad_refresh_token');
  });

  it('refuses bad refreshes with the documented errors, never a 500', async () => {
    const first = await tokensOf(otherApp);
    const cases: Array<[string, Promise<Response>, string]> = [
      [
        'wrong secret',
        refresh(otherApp, first.refresh_token, 'f'.repeat(40)),
        'incorrect_client_credentials',
      ],
      [
        'no client',
        tokenEndpoint({ grant_type: 'refresh_token', refresh_token: first.refresh_token }),
        'incorrect_client_credentials',
      ],
      // A web-flow family needs the secret (only device-flow families refresh with client_id alone).
      ['no secret', refresh(otherApp, first.refresh_token, ''), 'incorrect_client_credentials'],
      ['another app', refresh(app, first.refresh_token), 'bad_refresh_token'],
      ['no refresh token', refresh(otherApp, undefined), 'bad_refresh_token'],
      ['garbage', refresh(otherApp, 'ghr_nonsense'), 'bad_refresh_token'],
      ['an access token', refresh(otherApp, first.access_token), 'bad_refresh_token'],
      ['unknown', refresh(otherApp, `ghr_${'A'.repeat(36)}`), 'bad_refresh_token'],
    ];
    for (const [label, pending, error] of cases) {
      const response = await pending;
      expect(response.status, label).toBe(200);
      expect((await json(response)).error, label).toBe(error);
    }
    // None of those spent or revoked anything: the refresh token still works for its own app.
    expect(await userStatus(first.access_token)).toBe(200);
    const refreshed = await json(await refresh(otherApp, first.refresh_token));
    expect(refreshed.access_token).toMatch(/^gho_/);
  });
});

describe('switching it', () => {
  it('the admin CLI turns it on and off; tokens already issued keep their terms', async () => {
    const target = await createApp(stack.endpointsFile, 'hubot', 'Switched App');
    const on = await admin(stack.endpointsFile, 'app', 'token-expiration', 'enable', target.clientId);
    expect(on.code, on.stderr).toBe(0);
    expect(on.json).toMatchObject({ client_id: target.clientId, expire_user_tokens: true });
    const issued = await tokensOf(target);
    expect(issued.refresh_token).toMatch(/^ghr_/);

    const off = await admin(stack.endpointsFile, 'app', 'token-expiration', 'disable', target.clientId);
    expect(off.json).toMatchObject({ expire_user_tokens: false });
    expect(Object.keys(await tokensOf(target))).toEqual(['access_token', 'scope', 'token_type']);
    // The family issued while it was on still refreshes, into expiring tokens.
    const refreshed = await json(await refresh(target, issued.refresh_token));
    expect(refreshed.expires_in).toBe(EIGHT_HOURS);

    const usage = await admin(stack.endpointsFile, 'app', 'token-expiration', 'sometimes', target.clientId);
    expect(usage.code).toBe(2);
  });

  it('the developer settings checkbox registers and switches it', async () => {
    const owner = await signedUpUser(stack.webUrl, `owner-${++users}`, PASSWORD);
    await owner.browser.get('/settings/developers');
    expect(owner.browser.lastHtml).toContain('Expire user authorization tokens');
    const created = await owner.browser.post('/settings/developers', {
      name: 'Checkbox App',
      url: 'https://tool.example',
      callback_url: 'https://tool.example/callback',
      expire_user_tokens: 'on',
    });
    expect(created.status).toBe(200);
    const page = owner.browser.lastHtml;
    const target: App = {
      clientId: /<dt>Client ID<\/dt><dd><code>([0-9a-f]{20})<\/code><\/dd>/.exec(page)?.[1] ?? '',
      clientSecret: /<dd class="secret"><code>([^<]+)<\/code><\/dd>/.exec(page)?.[1] ?? '',
    };
    expect(page).toMatch(/name="expire_user_tokens" value="on"[^>]* checked>/);
    expect((await tokensOf(target)).refresh_token).toMatch(/^ghr_/);

    // Unticked and saved: off.
    const saved = await owner.browser.post(`/settings/developers/${target.clientId}/token-expiration`, {});
    expect(saved.status).toBe(303);
    await owner.browser.get(
      `${new URL(saved.headers.get('location') ?? '', stack.webUrl).pathname}?notice=token-expiration-saved`,
    );
    expect(owner.browser.lastHtml).toContain('Tokens issued from now on follow this setting');
    expect(owner.browser.lastHtml).not.toMatch(/name="expire_user_tokens" value="on"[^>]* checked>/);
    expect(await tokensOf(target)).not.toHaveProperty('refresh_token');

    // Someone else's application: 404, nothing changes.
    const stranger = await signedUpUser(stack.webUrl, `stranger-${++users}`, PASSWORD);
    await stranger.browser.get('/settings/developers');
    const refused = await stranger.browser.post(`/settings/developers/${target.clientId}/token-expiration`, {
      expire_user_tokens: 'on',
    });
    expect(refused.status).toBe(404);
    expect(await tokensOf(target)).not.toHaveProperty('refresh_token');
  });
});
