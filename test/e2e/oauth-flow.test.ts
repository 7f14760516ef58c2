import { createHash } from 'node:crypto';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeKey } from '#data/keys';
import { localDynamoDbClient } from '#local/dynamodb-local';
import { admin } from '#test/admin';
import { createApp, createUser, signedUpUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type App = Awaited<ReturnType<typeof createApp>>;
let stack: Stack;
let app: App;
let otherApp: App;

const CALLBACK = 'https://app.example/callback';
const PASSWORD = 'long-enough-pass-1';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'hubot');
  app = await createApp(stack.endpointsFile, 'hubot', 'Hubot App', CALLBACK);
  otherApp = await createApp(stack.endpointsFile, 'hubot', 'Other App', 'https://other.example/cb');
});
afterAll(async () => {
  await stack?.stop();
});

let users = 0;
const signedInUser = () => signedUpUser(stack.webUrl, `user-${++users}`, PASSWORD);

const authorizePath = (params: Record<string, string>) =>
  `/login/oauth/authorize?${new URLSearchParams(params)}`;

const unescapeHtml = (text: string) =>
  text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, entity: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[entity] ?? '',
  );

/** The consent form's hidden fields (the CSRF token aside), as a browser would send them back. */
function hiddenFields(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    if (match[1] !== '_csrf') fields[match[1] ?? ''] = unescapeHtml(match[2] ?? '');
  return fields;
}

const checkedScopes = (page: string) =>
  [...page.matchAll(/<input type="checkbox" name="granted_scope" value="([^"]+)" checked/g)].map(
    (m) => m[1] ?? '',
  );

/** Opens the consent page and submits it as the user would (all boxes ticked unless `ticked` says). */
async function decide(
  browser: WebClient,
  params: Record<string, string>,
  decision: 'authorize' | 'cancel' = 'authorize',
  ticked?: string[],
) {
  const page = await browser.get(authorizePath(params));
  expect(page.status, browser.lastHtml).toBe(200);
  return browser.post('/login/oauth/authorize', {
    ...hiddenFields(browser.lastHtml),
    granted_scope: ticked ?? checkedScopes(browser.lastHtml),
    decision,
  });
}

const location = (response: Response) =>
  new URL(response.headers.get('location') ?? 'missing:', stack.webUrl);
const codeOf = (response: Response) => location(response).searchParams.get('code') ?? '';

/** A code for a new signed-in user who authorizes `app` with these parameters. */
async function codeFor(params: Record<string, string> = {}) {
  const user = await signedInUser();
  const response = await decide(user.browser, { client_id: app.clientId, state: 'st', ...params });
  expect(response.status).toBe(303);
  return { ...user, code: codeOf(response) };
}

type Send = 'form' | 'json' | 'query';
function exchange(
  params: Record<string, string | undefined>,
  options: { send?: Send; accept?: string; basic?: string; body?: string } = {},
) {
  const defined = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
  const url = new URL('/login/oauth/access_token', stack.webUrl);
  const headers: Record<string, string> = {};
  if (options.accept) headers.Accept = options.accept;
  if (options.basic) headers.Authorization = options.basic;
  let body: string | undefined = options.body;
  if (options.send === 'query')
    for (const [name, value] of Object.entries(defined)) url.searchParams.set(name, value);
  else if (options.send === 'json') {
    body ??= JSON.stringify(defined);
    headers['Content-Type'] = 'application/json';
  } else {
    body ??= new URLSearchParams(defined).toString();
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
  }
  return fetch(url, { method: 'POST', headers, ...(body !== undefined ? { body } : {}) });
}

const withSecret = (code: string, extra: Record<string, string | undefined> = {}) => ({
  client_id: app.clientId,
  client_secret: app.clientSecret,
  code,
  ...extra,
});

async function exchangeJson(params: Record<string, string | undefined>) {
  const response = await exchange(params, { send: 'json', accept: 'application/json' });
  expect(response.status).toBe(200);
  return json(response);
}

const getUser = (token: string) =>
  fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } });

describe('GET /login/oauth/authorize: requests that cannot redirect get a page', () => {
  it.each([
    ['no client_id', false, {}, 400, 'client_id parameter is missing'],
    ['an unknown client_id', false, { client_id: '0123456789abcdef0123' }, 404, 'no application'],
    ['an absurd client_id', false, { client_id: 'x'.repeat(5000) }, 404, 'no application'],
    [
      'the implicit grant',
      true,
      { response_type: 'token' },
      400,
      'Only the authorization code grant is supported',
    ],
    ['a state over 1024 characters', true, { state: 's'.repeat(1025) }, 400, 'longer than 1024'],
    [
      'PKCE with plain',
      true,
      { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' },
      400,
      'S256',
    ],
    ['PKCE without a method (RFC 7636: plain)', true, { code_challenge: 'a'.repeat(43) }, 400, 'S256'],
    [
      'a PKCE method without a challenge',
      true,
      { code_challenge_method: 'S256' },
      400,
      'without a code_challenge',
    ],
    [
      'a malformed S256 challenge',
      true,
      { code_challenge: 'short', code_challenge_method: 'S256' },
      400,
      '43 base64url',
    ],
  ] as const)('%s', async (_, withApp, params, status, text) => {
    const browser = new WebClient(stack.webUrl);
    const response = await browser.get(
      authorizePath(withApp ? { client_id: app.clientId, ...params } : params),
    );
    expect(response.status).toBe(status);
    expect(response.headers.get('location')).toBeNull();
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(browser.lastHtml.toLowerCase()).toContain(text.toLowerCase());
  });

  it('refuses a parameter given twice', async () => {
    const browser = new WebClient(stack.webUrl);
    const response = await browser.get(
      `/login/oauth/authorize?client_id=${app.clientId}&client_id=${otherApp.clientId}`,
    );
    expect(response.status).toBe(400);
    expect(browser.lastHtml).toContain('client_id parameter was given more than once');
  });

  it('accepts a state of exactly 1024 characters', async () => {
    const response = await fetch(
      `${stack.webUrl}${authorizePath({ client_id: app.clientId, state: 's'.repeat(1024) })}`,
      { redirect: 'manual' },
    );
    expect(response.status).toBe(302);
    expect(location(response).pathname).toBe('/login');
  });
});

describe('GET /login/oauth/authorize: errors that redirect to the registered callback', () => {
  it('sends application_suspended for a suspended application, whatever redirect_uri says', async () => {
    const suspended = await createApp(stack.endpointsFile, 'hubot', 'Spammy', 'https://spam.example/cb');
    expect((await admin(stack.endpointsFile, 'app', 'suspend', suspended.clientId)).code).toBe(0);
    const response = await fetch(
      `${stack.webUrl}${authorizePath({ client_id: suspended.clientId, redirect_uri: 'https://spam.example/cb/sub', state: 'xyz' })}`,
      { redirect: 'manual' },
    );
    expect(response.status).toBe(302);
    const target = location(response);
    expect(`${target.origin}${target.pathname}`).toBe('https://spam.example/cb');
    expect(Object.fromEntries(target.searchParams)).toEqual({
      error: 'application_suspended',
      error_description: 'Your application has been suspended. Contact support@github.com.',
      error_uri: 'https://docs.github.com/rest/oauth/#application-suspended',
      state: 'xyz',
    });
    expect(response.headers.get('location')).toContain(
      'error_description=Your+application+has+been+suspended.',
    );
  });

  it.each([
    'https://app.example/callback2',
    'https://app.example/',
    'https://app.example:8443/callback',
    'http://app.example/callback',
    'https://evil.example/callback',
    'https://sub.app.example/callback',
    'https://app.example/callback/../elsewhere',
    'https://app.example/callback/%2e%2e/elsewhere',
    'https://app.example/callback%2F..%2Felsewhere',
    'https://app.example\\@evil.example/callback',
    'https://user@app.example/callback',
    'https://app.example/callback#fragment',
    '/callback',
    'not a url',
  ])('sends redirect_uri_mismatch for %s', async (redirectUri) => {
    const response = await fetch(
      `${stack.webUrl}${authorizePath({ client_id: app.clientId, redirect_uri: redirectUri, state: 'xyz' })}`,
      { redirect: 'manual' },
    );
    expect(response.status).toBe(302);
    const target = location(response);
    expect(`${target.origin}${target.pathname}`).toBe(CALLBACK);
    expect(Object.fromEntries(target.searchParams)).toEqual({
      error: 'redirect_uri_mismatch',
      error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
      error_uri: 'https://docs.github.com/rest/oauth/#redirect-uri-mismatch',
      state: 'xyz',
    });
  });
});

describe('GET /login/oauth/authorize: signing in', () => {
  it('sends signed-out users to the login page and brings them back, honouring allow_signup=false', async () => {
    const browser = new WebClient(stack.webUrl);
    const params = { client_id: app.clientId, scope: 'repo', state: 'abc', allow_signup: 'false' };
    const response = await browser.get(authorizePath(params));
    expect(response.status).toBe(302);
    const login = location(response);
    expect(login.pathname).toBe('/login');
    const returnTo = login.searchParams.get('return_to') ?? '';
    expect(Object.fromEntries(new URL(returnTo, stack.webUrl).searchParams)).toEqual(params);
    await browser.get(`${login.pathname}${login.search}`);
    expect(browser.lastHtml).not.toContain('Create an account');

    await createUser(stack.endpointsFile, 'returner', PASSWORD);
    const signedIn = await browser.post('/login', {
      login: 'returner',
      password: PASSWORD,
      return_to: returnTo,
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe(returnTo);
    const consent = await browser.get(returnTo);
    expect(consent.status).toBe(200);
    expect(browser.lastHtml).toContain('Authorize Hubot App');
  });
});

describe('the consent page', () => {
  it('names the application, its owner and homepage, and lists the normalized scopes with their descriptions', async () => {
    const { browser, login } = await signedInUser();
    const response = await browser.get(
      authorizePath({
        client_id: app.clientId,
        scope: 'user gist,user:email no-such-scope',
        state: 'st',
        redirect_uri: `${CALLBACK}/sub`,
      }),
    );
    expect(response.status).toBe(200);
    const page = browser.lastHtml;
    expect(page).toContain('<h1>Authorize Hubot App</h1>');
    expect(page).toContain('Hubot App by hubot');
    expect(page).toContain(`<strong>${login}</strong>`);
    expect(page).toContain('<a href="https://app.example" rel="noopener noreferrer">https://app.example</a>');
    expect(checkedScopes(page)).toEqual(['gist', 'user']);
    expect(page).not.toContain('value="no-such-scope"');
    expect(page).toContain('Read/write access to profile info only; includes user:email and user:follow');
    expect(page).toContain('Write access to gists');
    expect(page).toMatch(/<fieldset>\s*<legend>Permissions requested/);
    expect(page).toContain(
      '<button type="submit" name="decision" value="authorize" class="primary">Authorize Hubot App</button>',
    );
    expect(page).toContain('<button type="submit" name="decision" value="cancel">Cancel</button>');
    expect(hiddenFields(page)).toEqual({
      client_id: app.clientId,
      redirect_uri: `${CALLBACK}/sub`,
      scope: 'user gist,user:email no-such-scope',
      state: 'st',
    });
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("form-action 'self' https://app.example");
    expect(response.headers.get('x-frame-options')).toBe('DENY');
  });

  it('shows an application name as text, never as markup', async () => {
    const evil = await createApp(
      stack.endpointsFile,
      'hubot',
      '<script>alert(1)</script>',
      'https://evil-name.example/cb',
    );
    const { browser } = await signedInUser();
    const response = await browser.get(
      authorizePath({ client_id: evil.clientId, state: '"><img src=x onerror=alert(2)>' }),
    );
    expect(response.status).toBe(200);
    expect(browser.lastHtml).not.toContain('<script>alert(1)</script>');
    expect(browser.lastHtml).toContain('Authorize &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(browser.lastHtml).not.toContain('<img src=x');
    expect(browser.lastHtml).toContain('value="&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"');
  });
});

describe('POST /login/oauth/authorize', () => {
  it('Authorize: 303 to redirect_uri with code and state; the token carries only the ticked requested scopes', async () => {
    const { browser, auth } = await signedInUser();
    const response = await decide(
      browser,
      {
        client_id: app.clientId,
        scope: 'user gist',
        state: 'state-1',
        redirect_uri: `${CALLBACK}/sub?keep=1`,
      },
      'authorize',
      ['gist', 'repo'], // user unticked; repo was never requested
    );
    expect(response.status).toBe(303);
    const target = location(response);
    expect(`${target.origin}${target.pathname}`).toBe(`${CALLBACK}/sub`);
    expect(target.searchParams.get('keep')).toBe('1');
    expect(target.searchParams.get('state')).toBe('state-1');
    const code = target.searchParams.get('code') ?? '';
    expect(code).toMatch(/^[0-9a-f]{40}$/);

    const exchanged = await exchange(withSecret(code, { redirect_uri: `${CALLBACK}/sub?keep=1` }));
    expect(exchanged.status).toBe(200);
    expect(exchanged.headers.get('content-type')).toBe('application/x-www-form-urlencoded; charset=utf-8');
    expect(exchanged.headers.get('cache-control')).toBe('no-store');
    const text = await exchanged.text();
    expect(text).toMatch(/^access_token=gho_[0-9A-Za-z]{36}&scope=gist&token_type=bearer$/);
    const token = new URLSearchParams(text).get('access_token') ?? '';

    const me = await getUser(token);
    expect(me.status).toBe(200);
    expect(me.headers.get('x-oauth-scopes')).toBe('gist');
    const grants = await json(
      await fetch(`${stack.baseUrl}/applications/grants`, { headers: { Authorization: auth } }),
    );
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({
      app: { client_id: app.clientId, name: 'Hubot App' },
      scopes: ['gist'],
    });
  });

  it('Cancel: 302 to the registered callback with access_denied and the state', async () => {
    const { browser } = await signedInUser();
    const response = await decide(
      browser,
      { client_id: app.clientId, scope: 'repo', state: 'st-9', redirect_uri: `${CALLBACK}/sub` },
      'cancel',
    );
    expect(response.status).toBe(302);
    const target = location(response);
    expect(`${target.origin}${target.pathname}`).toBe(CALLBACK);
    expect(Object.fromEntries(target.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The user has denied your application access.',
      error_uri: 'https://docs.github.com/rest/oauth/#access-denied',
      state: 'st-9',
    });
  });

  it('checks the hidden fields again: a tampered redirect_uri or client, a missing decision, no CSRF token', async () => {
    const { browser } = await signedInUser();
    await browser.get(authorizePath({ client_id: app.clientId, scope: 'repo', state: 's' }));
    const fields = hiddenFields(browser.lastHtml);
    const csrf = browser.csrf();

    const tampered = await browser.post(
      '/login/oauth/authorize',
      { ...fields, redirect_uri: 'https://evil.example/callback', decision: 'authorize' },
      { csrf },
    );
    expect(tampered.status).toBe(302);
    expect(location(tampered).searchParams.get('error')).toBe('redirect_uri_mismatch');
    expect(location(tampered).origin).toBe('https://app.example');

    const unknown = await browser.post(
      '/login/oauth/authorize',
      { ...fields, client_id: 'f'.repeat(20), decision: 'authorize' },
      { csrf },
    );
    expect(unknown.status).toBe(404);

    const implicit = await browser.post(
      '/login/oauth/authorize',
      { ...fields, response_type: 'token', decision: 'authorize' },
      { csrf },
    );
    expect(implicit.status).toBe(400);

    const undecided = await browser.post(
      '/login/oauth/authorize',
      { ...fields, granted_scope: 'repo' },
      { csrf },
    );
    expect(undecided.status).toBe(400);

    const forged = await browser.post(
      '/login/oauth/authorize',
      { ...fields, decision: 'authorize' },
      { csrf: null },
    );
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
  });

  it('sends a signed-out POST back through the login page', async () => {
    const browser = new WebClient(stack.webUrl);
    await browser.get('/login');
    const response = await browser.post('/login/oauth/authorize', {
      client_id: app.clientId,
      scope: 'repo',
      decision: 'authorize',
    });
    expect(response.status, browser.lastHtml).toBe(303);
    const login = location(response);
    expect(login.pathname).toBe('/login');
    expect(login.searchParams.get('return_to')).toBe(
      `/login/oauth/authorize?client_id=${app.clientId}&scope=repo`,
    );
  });
});

describe('scopes already granted', () => {
  it('skip the consent page when every requested scope is granted (also by implication), with the union of granted scopes', async () => {
    const { browser, code } = await codeFor({ scope: 'user gist' });
    expect((await exchangeJson(withSecret(code))).scope).toBe('gist,user');

    const again = await browser.get(
      authorizePath({ client_id: app.clientId, scope: 'user:email', state: 'again' }),
    );
    expect(again.status).toBe(302);
    expect(location(again).searchParams.get('state')).toBe('again');
    expect((await exchangeJson(withSecret(codeOf(again)))).scope).toBe('gist,user');

    const omitted = await browser.get(authorizePath({ client_id: app.clientId }));
    expect(omitted.status).toBe(302);
    expect(location(omitted).searchParams.has('state')).toBe(false);
    expect((await exchangeJson(withSecret(codeOf(omitted)))).scope).toBe('gist,user');

    const more = await browser.get(authorizePath({ client_id: app.clientId, scope: 'repo' }));
    expect(more.status).toBe(200);
    expect(checkedScopes(browser.lastHtml)).toEqual(['repo']);
    expect(browser.lastHtml).toContain('You already granted it');
  });

  it('ask a user who granted nothing even when no scope is requested', async () => {
    const { browser } = await signedInUser();
    const response = await browser.get(authorizePath({ client_id: app.clientId }));
    expect(response.status).toBe(200);
    expect(browser.lastHtml).toContain('No extra permissions');
    const approved = await browser.post('/login/oauth/authorize', {
      ...hiddenFields(browser.lastHtml),
      decision: 'authorize',
    });
    expect(approved.status).toBe(303);
    expect(await exchangeJson(withSecret(codeOf(approved)))).toMatchObject({
      scope: '',
      token_type: 'bearer',
    });
  });
});

describe('POST /login/oauth/access_token', () => {
  it('takes JSON, a query string, or HTTP Basic client credentials, and answers JSON or XML by Accept', async () => {
    const first = await codeFor({ scope: 'repo gist' });
    const byJson = await exchange(withSecret(first.code), { send: 'json', accept: 'application/json' });
    expect(byJson.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = await json(byJson);
    expect(body).toEqual({
      access_token: expect.stringMatching(/^gho_/),
      scope: 'gist,repo',
      token_type: 'bearer',
    });

    const second = await codeFor({ scope: 'repo' });
    const byQuery = await exchange(withSecret(second.code), { send: 'query', accept: 'application/xml' });
    expect(byQuery.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(await byQuery.text()).toMatch(
      /^<OAuth><token_type>bearer<\/token_type><scope>repo<\/scope><access_token>gho_[0-9A-Za-z]{36}<\/access_token><\/OAuth>$/,
    );

    const third = await codeFor({ scope: 'gist' });
    const byBasic = await exchange({ code: third.code }, { basic: app.basic, accept: 'application/json' });
    expect(await json(byBasic)).toMatchObject({ scope: 'gist', token_type: 'bearer' });
  });

  it('answers incorrect_client_credentials with status 200 in all three formats', async () => {
    const { code } = await codeFor();
    const wrong = withSecret(code, { client_secret: 'f'.repeat(40) });
    const asForm = await exchange(wrong);
    expect(asForm.status).toBe(200);
    expect(await asForm.text()).toBe(
      'error=incorrect_client_credentials&error_description=The+client_id+and%2For+client_secret+passed+are+incorrect.&error_uri=https%3A%2F%2Fdocs.github.com%2Frest%2Foauth%2F%23incorrect-client-credentials',
    );
    const asJson = await exchange(wrong, { accept: 'application/json' });
    expect(asJson.status).toBe(200);
    expect(await json(asJson)).toEqual({
      error: 'incorrect_client_credentials',
      error_description: 'The client_id and/or client_secret passed are incorrect.',
      error_uri: 'https://docs.github.com/rest/oauth/#incorrect-client-credentials',
    });
    const asXml = await exchange(wrong, { accept: 'application/xml' });
    expect(asXml.status).toBe(200);
    expect(await asXml.text()).toBe(
      '<OAuth><error>incorrect_client_credentials</error><error_description>The client_id and/or client_secret passed are incorrect.</error_description><error_uri>https://docs.github.com/rest/oauth/#incorrect-client-credentials</error_uri></OAuth>',
    );
    for (const params of [
      { code },
      { client_id: app.clientId, code },
      { client_secret: app.clientSecret, code },
    ]) {
      expect((await exchangeJson(params)).error).toBe('incorrect_client_credentials');
    }
    expect((await exchangeJson({ ...wrong, client_id: 'x'.repeat(3000) })).error).toBe(
      'incorrect_client_credentials',
    );
    const mixed = await exchange(
      { client_id: otherApp.clientId, code },
      { basic: app.basic, accept: 'application/json' },
    );
    expect((await json(mixed)).error).toBe('incorrect_client_credentials');
    // The failed attempts did not spend the code.
    expect((await exchangeJson(withSecret(code))).token_type).toBe('bearer');
  });

  it("answers bad_verification_code for an unknown code, another client's code, and a missing code", async () => {
    const { code } = await codeFor();
    expect((await exchangeJson(withSecret('0'.repeat(40)))).error).toBe('bad_verification_code');
    expect((await exchangeJson(withSecret('not-a-code'))).error).toBe('bad_verification_code');
    expect((await exchangeJson(withSecret(''))).error).toBe('bad_verification_code');
    const byOther = await exchangeJson({
      client_id: otherApp.clientId,
      client_secret: otherApp.clientSecret,
      code,
    });
    expect(byOther).toEqual({
      error: 'bad_verification_code',
      error_description: 'The code passed is incorrect or expired.',
      error_uri: 'https://docs.github.com/rest/oauth/#bad-verification-code',
    });
    expect((await exchangeJson(withSecret(code))).token_type).toBe('bearer');
  });

  it('requires the redirect_uri the code was issued for; a code issued without one accepts any valid one', async () => {
    const bound = await codeFor({ redirect_uri: `${CALLBACK}/one` });
    for (const redirectUri of [undefined, CALLBACK, `${CALLBACK}/two`, 'https://evil.example/callback/one']) {
      const body = await exchangeJson(withSecret(bound.code, { redirect_uri: redirectUri }));
      expect(body, String(redirectUri)).toMatchObject({
        error: 'redirect_uri_mismatch',
        error_uri: 'https://docs.github.com/rest/oauth/#redirect-uri-mismatch(2)',
      });
    }
    expect((await exchangeJson(withSecret(bound.code, { redirect_uri: `${CALLBACK}/one` }))).token_type).toBe(
      'bearer',
    );

    const unbound = await codeFor();
    expect(
      (await exchangeJson(withSecret(unbound.code, { redirect_uri: 'https://app.example/elsewhere' }))).error,
    ).toBe('redirect_uri_mismatch');
    expect(
      (await exchangeJson(withSecret(unbound.code, { redirect_uri: `${CALLBACK}/any/sub` }))).token_type,
    ).toBe('bearer');
  });

  it('answers a body it cannot read with invalid_request and status 400', async () => {
    const response = await exchange({}, { send: 'json', accept: 'application/json', body: '{nope' });
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({
      error: 'invalid_request',
      error_description: 'Problems parsing JSON',
    });
  });

  it("stores only the code's hash, with a 10-minute TTL, and refuses a code past its expiry before TTL deletes it", async () => {
    const { code } = await codeFor({ scope: 'gist' });
    const documents = DynamoDBDocumentClient.from(localDynamoDbClient(stack.dynamodbEndpoint));
    const key = codeKey(sha256(code));
    const { Item } = await documents.send(new GetCommand({ TableName: stack.tableName, Key: key }));
    const now = Math.floor(Date.now() / 1000);
    expect(Item?._type).toBe('AuthorizationCode');
    expect(Item?.expiresAt).toBeGreaterThan(now + 590);
    expect(Item?.expiresAt).toBeLessThanOrEqual(now + 600);
    expect(JSON.stringify(Item)).not.toContain(code);

    await documents.send(
      new UpdateCommand({
        TableName: stack.tableName,
        Key: key,
        UpdateExpression: 'SET expiresAt = :past',
        ExpressionAttributeValues: { ':past': now - 1 },
      }),
    );
    expect((await exchangeJson(withSecret(code))).error).toBe('bad_verification_code');
  });

  it('counts web-flow tokens in the 10-token limit per user, application and scope set', async () => {
    const { browser, auth, code } = await codeFor({ scope: 'gist' });
    const tokens = [(await exchangeJson(withSecret(code))).access_token as string];
    for (let i = 0; i < 10; i++) {
      const again = await browser.get(authorizePath({ client_id: app.clientId, scope: 'gist' }));
      expect(again.status).toBe(302);
      tokens.push((await exchangeJson(withSecret(codeOf(again)))).access_token);
    }
    expect((await getUser(tokens[0] ?? '')).status).toBe(401);
    expect((await getUser(tokens[10] ?? '')).status).toBe(200);
    const list = await json(
      await fetch(`${stack.baseUrl}/authorizations`, { headers: { Authorization: auth } }),
    );
    expect(list).toHaveLength(10);
  });
});

describe('codes are single use', () => {
  it('a second exchange fails and revokes the token the first one issued', async () => {
    const { code, auth } = await codeFor({ scope: 'gist' });
    const first = await exchangeJson(withSecret(code));
    expect((await getUser(first.access_token)).status).toBe(200);

    const second = await exchangeJson(withSecret(code));
    expect(second.error).toBe('bad_verification_code');
    expect((await getUser(first.access_token)).status).toBe(401);
    expect(
      await json(await fetch(`${stack.baseUrl}/applications/grants`, { headers: { Authorization: auth } })),
    ).toEqual([]);
    expect((await exchangeJson(withSecret(code))).error).toBe('bad_verification_code');
  });

  it('a reuse finds the token by its hash when the first exchange never recorded it (it died after minting)', async () => {
    const { code } = await codeFor({ scope: 'gist' });
    const first = await exchangeJson(withSecret(code));
    const documents = DynamoDBDocumentClient.from(localDynamoDbClient(stack.dynamodbEndpoint));
    await documents.send(
      new UpdateCommand({
        TableName: stack.tableName,
        Key: codeKey(sha256(code)),
        UpdateExpression: 'REMOVE authorizationId',
      }),
    );
    expect((await exchangeJson(withSecret(code))).error).toBe('bad_verification_code');
    expect((await getUser(first.access_token)).status).toBe(401);
  });

  it('of two concurrent exchanges exactly one gets a token, and that token does not survive', async () => {
    for (let round = 0; round < 5; round++) {
      const { code, auth } = await codeFor({ scope: 'repo' });
      const results = await Promise.all([exchangeJson(withSecret(code)), exchangeJson(withSecret(code))]);
      const issued = results.filter((body) => body.access_token);
      expect(issued).toHaveLength(1);
      expect(results.filter((body) => body.error === 'bad_verification_code')).toHaveLength(1);
      expect((await getUser(issued[0].access_token)).status).toBe(401);
      expect(
        await json(await fetch(`${stack.baseUrl}/authorizations`, { headers: { Authorization: auth } })),
      ).toEqual([]);
    }
  });
});

describe('PKCE', () => {
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

  it('binds the code to the S256 challenge: no verifier or a wrong one is bad_verification_code', async () => {
    const { code } = await codeFor({ code_challenge: challenge, code_challenge_method: 'S256' });
    expect((await exchangeJson(withSecret(code))).error).toBe('bad_verification_code');
    expect((await exchangeJson(withSecret(code, { code_verifier: `${verifier.slice(0, -1)}Y` }))).error).toBe(
      'bad_verification_code',
    );
    expect((await exchangeJson(withSecret(code, { code_verifier: challenge }))).error).toBe(
      'bad_verification_code',
    );
    const body = await exchangeJson(withSecret(code, { code_verifier: verifier }));
    expect(body.token_type).toBe('bearer');
    expect((await getUser(body.access_token)).status).toBe(200);
  });

  it('refuses a verifier for a code issued without PKCE (downgrade)', async () => {
    const { code } = await codeFor();
    expect((await exchangeJson(withSecret(code, { code_verifier: verifier }))).error).toBe(
      'bad_verification_code',
    );
    expect((await exchangeJson(withSecret(code))).token_type).toBe('bearer');
  });

  it('checks the challenge again on the consent POST', async () => {
    const { browser } = await signedInUser();
    await browser.get(
      authorizePath({ client_id: app.clientId, code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    const fields = hiddenFields(browser.lastHtml);
    expect(fields).toMatchObject({ code_challenge: challenge, code_challenge_method: 'S256' });
    const response = await browser.post('/login/oauth/authorize', {
      ...fields,
      code_challenge_method: 'plain',
      decision: 'authorize',
    });
    expect(response.status).toBe(400);
  });
});
