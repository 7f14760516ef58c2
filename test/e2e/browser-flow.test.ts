import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '#domain/scopes';
import { launchBrowser, screenshot } from '#test/browser';
import { createApp, createUser, enableOtp } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';

/*
 * The OAuth web flow and the settings pages in a real browser (Debian's Chromium driven by
 * playwright-core), against the local service, with a real OAuth client: a small HTTP server in
 * this file that is the application's callback. Links are followed by their accessible names, so
 * nothing here depends on whether the pages write them relative or absolute.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type App = Awaited<ReturnType<typeof createApp>>;

/** What the application's callback received, one entry per request. */
interface CallbackHit {
  readonly code: string | null;
  readonly state: string | null;
  readonly error: string | null;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/**
 * The OAuth client's side: `/callback` records `code`, `state` and `error` and answers a small
 * page; `/frame?src=<url>` answers a page that puts `<url>` in an iframe (the clickjacking attempt).
 */
async function startClientApp(): Promise<{
  origin: string;
  port: number;
  hits: CallbackHit[];
  stop(): Promise<void>;
}> {
  const hits: CallbackHit[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/callback') {
      const hit = {
        code: url.searchParams.get('code'),
        state: url.searchParams.get('state'),
        error: url.searchParams.get('error'),
      };
      hits.push(hit);
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><html lang="en"><head><title>Client app</title></head><body>
<h1>Client app: callback received</h1>
<p>${hit.error ? `error: ${escapeHtml(hit.error)}` : `code received: ${hit.code ? 'yes' : 'no'}`}</p>
<p>state: ${escapeHtml(hit.state ?? '(none)')}</p></body></html>`);
      return;
    }
    if (url.pathname === '/frame') {
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><html lang="en"><head><title>Innocent page</title></head><body>
<h1>Win a prize: click the green button</h1>
<iframe id="victim" title="victim" width="800" height="600" src="${escapeHtml(url.searchParams.get('src') ?? '')}"></iframe>
</body></html>`);
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    hits,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let stack: Stack;
let client: Awaited<ReturnType<typeof startClientApp>>;
let app: App;
let browser: Browser;
let launchMs = 0;

const APP_NAME = 'Octo Client';
const PASSWORD = 'correct-horse-battery-7';

beforeAll(async () => {
  stack = await startTestStack();
  client = await startClientApp();
  await createUser(stack.endpointsFile, 'app-owner');
  app = await createApp(stack.endpointsFile, 'app-owner', APP_NAME, `${client.origin}/callback`);
  const launched = performance.now();
  browser = await launchBrowser();
  launchMs = performance.now() - launched;
});
afterAll(async () => {
  await browser?.close();
  await client?.stop();
  await stack?.stop();
});

const newState = () => randomBytes(16).toString('hex');

const authorizeUrl = (clientId: string, params: Record<string, string>) =>
  `${stack.webUrl}/login/oauth/authorize?${new URLSearchParams({ client_id: clientId, ...params })}`;

const pathIs = (path: string) => (url: URL) => url.origin === stack.webUrl && url.pathname === path;
const atCallback = (url: URL) => url.origin === client.origin && url.pathname === '/callback';

/** The callback request that carried `state` (each flow uses its own random state). */
function callbackWith(state: string): CallbackHit {
  const hit = client.hits.find((h) => h.state === state);
  if (!hit) throw new Error(`the callback never received state ${state}`);
  return hit;
}

/** The client's back-channel request: code → token (JSON). */
async function exchangeCode(code: string) {
  const response = await fetch(`${stack.webUrl}/login/oauth/access_token`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_id: app.clientId, client_secret: app.clientSecret, code }),
  });
  expect(response.status).toBe(200);
  return json(response);
}

const getUser = (token: string) =>
  fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } });

const heading = (page: Page) => page.getByRole('heading', { level: 1 });

async function withPage<T>(run: (page: Page, context: BrowserContext) => Promise<T>): Promise<T> {
  const context = await browser.newContext();
  try {
    return await run(await context.newPage(), context);
  } finally {
    await context.close();
  }
}

describe('the OAuth web flow in Chromium', () => {
  it('sign-up, consent, redirect, code exchange, token', async () => {
    const started = performance.now();
    const login = `newcomer-${randomBytes(3).toString('hex')}`;
    const state = newState();
    const landed = await withPage(async (page) => {
      // Signed out: the authorize URL sends the browser to the sign-in page.
      await page.goto(authorizeUrl(app.clientId, { scope: 'user repo', state }));
      await page.waitForURL(pathIs('/login'));
      await expect(heading(page).textContent()).resolves.toBe('Sign in');
      await screenshot(page, 'flow-01-login');

      await page.getByRole('link', { name: 'Create an account' }).click();
      await page.waitForURL(pathIs('/signup'));
      await expect(heading(page).textContent()).resolves.toBe('Create your account');
      await page.getByLabel('Username', { exact: true }).fill(login);
      await page.getByLabel('Email', { exact: true }).fill(`${login}@example.com`);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await screenshot(page, 'flow-02-signup');
      await page.getByRole('button', { name: 'Create account' }).click();

      // Back on the consent page, signed in as the new user.
      await page.waitForURL(pathIs('/login/oauth/authorize'));
      await expect(heading(page).textContent()).resolves.toBe(`Authorize ${APP_NAME}`);
      const main = page.getByRole('main');
      await expect(main.textContent()).resolves.toContain(`${APP_NAME} by app-owner`);
      await expect(main.textContent()).resolves.toContain(login);
      await expect(page.getByText(SCOPES.user, { exact: true }).isVisible()).resolves.toBe(true);
      await expect(page.getByText(SCOPES.repo, { exact: true }).isVisible()).resolves.toBe(true);
      const userBox = page.getByRole('checkbox', { name: 'user', exact: true });
      const repoBox = page.getByRole('checkbox', { name: 'repo', exact: true });
      await expect(userBox.isChecked()).resolves.toBe(true);
      await expect(repoBox.isChecked()).resolves.toBe(true);
      await repoBox.uncheck();
      await screenshot(page, 'flow-03-consent');

      await page.getByRole('button', { name: `Authorize ${APP_NAME}` }).click();
      await page.waitForURL(atCallback);
      await screenshot(page, 'flow-04-callback');
      return new URL(page.url());
    });

    const hit = callbackWith(state);
    expect(hit.error).toBeNull();
    expect(hit.code).toMatch(/^[0-9a-f]{40}$/);
    expect(landed.searchParams.get('state')).toBe(state);

    const token = await exchangeCode(hit.code ?? '');
    expect(token).toEqual({
      access_token: expect.stringMatching(/^gho_[0-9A-Za-z]{36}$/),
      scope: 'user',
      token_type: 'bearer',
    });
    const me = await getUser(token.access_token);
    expect(me.status).toBe(200);
    expect(me.headers.get('x-oauth-scopes')).toBe('user');
    expect((await json(me)).login).toBe(login);

    const flowMs = performance.now() - started;
    console.log(
      `browser flow (authorize → sign-up → consent → callback → exchange → GET /user): ${flowMs.toFixed(0)} ms without browser launch, ${(flowMs + launchMs).toFixed(0)} ms with it (launch ${launchMs.toFixed(0)} ms)`,
    );
  });

  it('a second login flow with two-factor, and revoking on the settings page', async () => {
    const login = `twofa-${randomBytes(3).toString('hex')}`;
    await createUser(stack.endpointsFile, login, PASSWORD);
    const otp = await enableOtp(stack.endpointsFile, login);
    const state = newState();

    await withPage(async (page) => {
      await page.goto(authorizeUrl(app.clientId, { scope: 'repo gist', state }));
      await page.waitForURL(pathIs('/login'));
      await page.getByLabel('Username', { exact: true }).fill(login);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();

      await page.waitForURL(pathIs('/login/two-factor'));
      await expect(heading(page).textContent()).resolves.toBe('Two-factor authentication');
      await page.getByLabel('Authentication code').fill(otp.code());
      await screenshot(page, 'flow-05-two-factor');
      await page.getByRole('button', { name: 'Verify' }).click();

      await page.waitForURL(pathIs('/login/oauth/authorize'));
      await expect(heading(page).textContent()).resolves.toBe(`Authorize ${APP_NAME}`);
      await page.getByRole('button', { name: `Authorize ${APP_NAME}` }).click();
      await page.waitForURL(atCallback);

      const hit = callbackWith(state);
      const token = await exchangeCode(hit.code ?? '');
      expect(token).toMatchObject({ scope: 'gist,repo', token_type: 'bearer' });
      const me = await getUser(token.access_token);
      expect(me.status).toBe(200);
      expect((await json(me)).login).toBe(login);

      // The user takes the access back on the settings page.
      await page.goto(`${stack.webUrl}/settings/connections/applications`);
      await expect(heading(page).textContent()).resolves.toBe('Authorized OAuth applications');
      await screenshot(page, 'flow-06-settings-applications');
      await page.getByRole('link', { name: APP_NAME, exact: true }).click();
      await page.waitForURL(pathIs(`/settings/connections/applications/${app.clientId}`));
      await expect(heading(page).textContent()).resolves.toBe(APP_NAME);
      await expect(page.getByText(SCOPES.repo).isVisible()).resolves.toBe(true);
      await screenshot(page, 'flow-07-settings-application-review');
      await page.getByRole('button', { name: `Revoke access for ${APP_NAME}` }).click();
      await page.waitForURL(pathIs('/settings/connections/applications'));
      await expect(page.getByRole('status').textContent()).resolves.toContain('Access revoked.');
      await expect(page.getByRole('link', { name: APP_NAME, exact: true }).count()).resolves.toBe(0);
      await screenshot(page, 'flow-08-settings-after-revoke');
      expect((await getUser(token.access_token)).status).toBe(401);

      // A personal access token, made on the tokens page and shown once.
      await page.goto(`${stack.webUrl}/settings/tokens`);
      await expect(heading(page).textContent()).resolves.toBe('Personal access tokens');
      await screenshot(page, 'flow-09-settings-tokens');
      await page.getByLabel('Note', { exact: true }).fill('laptop cli');
      await page.getByRole('checkbox', { name: 'gist', exact: true }).check();
      await page.getByRole('button', { name: 'Generate token' }).click();
      await page.waitForURL(pathIs('/settings/tokens'));
      const shown = (await page.locator('.secret code').textContent()) ?? '';
      expect(shown).toMatch(/^ghp_[0-9A-Za-z]{36}$/);
      await expect(page.getByRole('status').first().textContent()).resolves.toContain(
        'you won’t be able to see it again',
      );
      await screenshot(page, 'flow-10-settings-token-created');
      const withPersonal = await getUser(shown);
      expect(withPersonal.status).toBe(200);
      expect(withPersonal.headers.get('x-oauth-scopes')).toBe('gist');
      await page.goto(`${stack.webUrl}/settings/tokens`);
      const listed = (await page.getByRole('main').textContent()) ?? '';
      expect(listed).toContain(`…${shown.slice(-8)}`);
      expect(listed).not.toContain(shown);

      await page.goto(`${stack.webUrl}/settings/developers`);
      await expect(heading(page).textContent()).resolves.toBe('OAuth applications');
      await expect(page.getByRole('button', { name: 'Register application' }).isVisible()).resolves.toBe(
        true,
      );
      await screenshot(page, 'flow-11-settings-developers');
    });
  });

  it('clickjacking and escaping: the consent page refuses to be framed and shows a hostile name as text', async () => {
    const login = `framed-${randomBytes(3).toString('hex')}`;
    await createUser(stack.endpointsFile, login, PASSWORD);
    const hostileName = '<img src=x onerror=window.__pwned=1>';
    const hostile = await createApp(
      stack.endpointsFile,
      'app-owner',
      hostileName,
      `${client.origin}/callback`,
    );

    await withPage(async (page) => {
      await page.goto(`${stack.webUrl}/login`);
      await page.getByLabel('Username', { exact: true }).fill(login);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname !== '/login');

      // The framing page is served as `localhost` like the service, so the two are same-site and
      // the session cookie (SameSite=Lax) travels with the frame's request: the server does render
      // the consent page, and only its headers keep it out of the frame.
      const consentUrl = authorizeUrl(app.clientId, { scope: 'repo', state: newState() });
      const framed: PageResponse[] = [];
      page.on('response', (response) => {
        if (response.url() === consentUrl) framed.push(response);
      });
      await page.goto(`http://localhost:${client.port}/frame?src=${encodeURIComponent(consentUrl)}`);
      await page.waitForLoadState('load');
      await screenshot(page, 'flow-12-framing-attempt');

      expect(framed).toHaveLength(1);
      const response = framed[0] as PageResponse;
      expect(response.status()).toBe(200);
      expect(response.frame()).not.toBe(page.mainFrame());
      const headers = await response.allHeaders();
      expect(headers['x-frame-options']).toBe('DENY');
      expect(headers['content-security-policy']).toMatch(/(^|;)\s*frame-ancestors 'none'\s*(;|$)/);

      const frame = await page
        .locator('#victim')
        .elementHandle()
        .then((element) => element?.contentFrame());
      expect(frame).toBeTruthy();
      expect(frame?.url()).not.toContain(stack.webUrl);
      expect(frame?.url()).toBe('chrome-error://chromewebdata/');
      expect(await frame?.content()).not.toContain(`Authorize ${APP_NAME}`);
      expect(
        await frame?.getByRole('button', { name: `Authorize ${APP_NAME}` }).count(),
        'no Authorize button inside the frame',
      ).toBe(0);

      // An application whose name is markup: shown as text, never run.
      await page.goto(authorizeUrl(hostile.clientId, { scope: 'gist', state: newState() }));
      await page.waitForURL(pathIs('/login/oauth/authorize'));
      await expect(heading(page).textContent()).resolves.toBe(`Authorize ${hostileName}`);
      await expect(page.getByRole('button', { name: `Authorize ${hostileName}` }).count()).resolves.toBe(1);
      await expect(page.locator('img').count()).resolves.toBe(0);
      await expect(
        page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned),
      ).resolves.toBeUndefined();
      await screenshot(page, 'flow-13-consent-hostile-name');
    });
  });
});
