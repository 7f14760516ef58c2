import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '#test/browser';
import { createApp, createUser, personalToken } from '#test/fixtures';
import { basicAuth, startTestStack } from '#test/stack';

/*
 * The security log page (`/settings/security-log`) in Chromium: signed in through the login form,
 * reached from the settings navigation, showing the person's own events (what, by whom, from which
 * address, when, about what), paged by "Older events"; another person sees none of them.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let browser: Browser;
let callback: Server;
let callbackUrl: string;
const PASSWORD = 'browser-pass-1';

/** Fills the sign-in form the page shows and waits to land on `then`. */
async function signIn(page: Page, login: string, then = '/'): Promise<void> {
  await page.getByLabel('Username', { exact: true }).fill(login);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === then);
}

beforeAll(async () => {
  stack = await startTestStack();
  browser = await launchBrowser();
  // The application's callback, on this machine: it only says it was reached.
  callback = createServer((_request, response) => response.end('callback reached'));
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  const ada = await createUser(stack.endpointsFile, 'ada', PASSWORD);
  await createUser(stack.endpointsFile, 'grace', PASSWORD);
  // More events than a page holds (50): tokens made through the API, then one wrong password.
  for (let n = 0; n < 52; n++) await personalToken(stack.baseUrl, ada.auth, [], `token ${n}`);
  await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: basicAuth('ada', 'not-her-password') } });
}, 120_000);
afterAll(async () => {
  await new Promise((resolve) => callback?.close(resolve));
  await browser?.close();
  await stack?.stop();
});

describe('/settings/security-log in Chromium', () => {
  it('shows the person their events from the settings navigation, newest first, page by page', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.webUrl}/login`);
    await signIn(page, 'ada');
    await page
      .getByRole('navigation', { name: 'Account' })
      .getByRole('link', { name: 'Security log' })
      .click();
    await page.waitForURL((url) => url.pathname === '/settings/security-log');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Security log');
    const rows = page.getByRole('table').locator('tbody tr');
    await expect(rows.count()).resolves.toBe(50);
    // Newest first: this sign-in, then the tokens from the newest. The failed sign-in is filed
    // under the start of its minute (one item per address and minute), among the tokens.
    const first = await rows.nth(0).textContent();
    expect(first).toContain('user.login');
    expect(first).toContain('You');
    expect(first).toMatch(/127\.0\.0\.1|::1/);
    const texts = await rows.allTextContents();
    const tokens = texts.filter((text) => text.includes('oauth_access.create'));
    expect(tokens[0]).toContain('token “token 51”');
    await screenshot(page, 'security-log-01');

    await page.getByRole('link', { name: 'Older events' }).click();
    const older = await page.getByRole('table').locator('tbody tr').allTextContents();
    // 52 tokens, a failed sign-in and a sign-in: four on the second page, and no third.
    expect(older).toHaveLength(4);
    expect(older.filter((text) => text.includes('oauth_access.create')).at(-1)).toContain('token “token 0”');
    const failed = [...texts, ...older].filter((text) => text.includes('user.failed_login'));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toContain('Someone not signed in');
    await expect(page.getByRole('link', { name: 'Older events' }).count()).resolves.toBe(0);
    await context.close();
  }, 60_000);

  it('shows what was done in the browser: a token made on the settings page, an application authorized on the consent page', async () => {
    await createUser(stack.endpointsFile, 'linus', PASSWORD);
    const app = await createApp(stack.endpointsFile, 'linus', 'Browser Agent', callbackUrl);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.webUrl}/settings/tokens`);
    await signIn(page, 'linus', '/settings/tokens');
    await page.getByLabel('Note', { exact: true }).fill('made in Chromium');
    await page.getByRole('button', { name: 'Generate token' }).click();
    await page.waitForLoadState();
    await page.goto(`${stack.webUrl}/login/oauth/authorize?client_id=${app.clientId}&scope=repo&state=s`);
    await page.getByRole('button', { name: 'Authorize Browser Agent' }).click();
    await page.waitForURL((url) => url.href.startsWith(callbackUrl));

    await page.goto(`${stack.webUrl}/settings/security-log`);
    const texts = await page.getByRole('table').locator('tbody tr').allTextContents();
    expect(texts[0]).toContain('oauth_authorization.create');
    expect(texts[0]).toContain(`Browser Agent (${app.clientId})`);
    expect(texts[1]).toContain('oauth_access.create');
    expect(texts[1]).toContain('token “made in Chromium”');
    expect(texts[2]).toContain('user.login');
    for (const text of texts) expect(text).toMatch(/127\.0\.0\.1|::1/);
    await screenshot(page, 'security-log-02');
    await context.close();
  }, 60_000);

  it('shows another person none of them, and a signed-out visitor the sign-in page', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.webUrl}/settings/security-log`);
    await page.waitForURL((url) => url.pathname === '/login');
    await signIn(page, 'grace', '/settings/security-log');
    const text = (await page.getByRole('main').textContent()) ?? '';
    expect(text).toContain('user.login');
    expect(text).not.toContain('token “token');
    expect(text).not.toContain('user.failed_login');
    await context.close();
  }, 60_000);
});
