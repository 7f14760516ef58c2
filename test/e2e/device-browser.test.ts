import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { launchBrowser, screenshot } from '#test/browser';
import { createApp, createUser, enableOtp } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';

/*
 * The device flow's page in Chromium: a user with two-factor authentication opens the
 * verification URI, signs in (password, then one-time code), enters the code the device shows and
 * approves; the device's next poll gets the token.
 */
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let browser: Browser;
let app: Awaited<ReturnType<typeof createApp>>;
let otp: Awaited<ReturnType<typeof enableOtp>>;
const APP_NAME = 'Octo Device';
const PASSWORD = 'device-browser-pass-1';

beforeAll(async () => {
  stack = await startTestStack();
  const setUpApp = async () => {
    await createUser(stack.endpointsFile, 'dev-owner');
    const made = await createApp(stack.endpointsFile, 'dev-owner', APP_NAME);
    expect((await admin(stack.endpointsFile, 'app', 'device-flow', 'enable', made.clientId)).code).toBe(0);
    return made;
  };
  const setUpUser = async () => {
    await createUser(stack.endpointsFile, 'octocat', PASSWORD);
    return enableOtp(stack.endpointsFile, 'octocat');
  };
  [app, otp, browser] = await Promise.all([setUpApp(), setUpUser(), launchBrowser()]);
}, 40_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

const form = (params: Record<string, string>) => ({
  method: 'POST',
  headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(params),
});

const pathIs = (path: string) => (url: URL) => url.origin === stack.webUrl && url.pathname === path;
const heading = (page: Page) => page.getByRole('heading', { level: 1 });

describe('the device flow in Chromium', () => {
  it('sign in with two-factor, enter the code, approve; the device gets its token', async () => {
    const codes = await json(
      await fetch(`${stack.webUrl}/login/device/code`, form({ client_id: app.clientId, scope: 'repo' })),
    );
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(codes.verification_uri);
      await page.waitForURL(pathIs('/login'));
      await page.getByLabel('Username', { exact: true }).fill('octocat');
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(pathIs('/login/two-factor'));
      await page.getByLabel('Authentication code').fill(otp.code());
      await page.getByRole('button', { name: 'Verify' }).click();

      await page.waitForURL(pathIs('/login/device'));
      await expect(heading(page).textContent()).resolves.toBe('Device activation');
      // Typed as a person might: lower case, without the hyphen.
      await page
        .getByLabel('Enter the code displayed on your device')
        .fill(codes.user_code.replace('-', '').toLowerCase());
      await screenshot(page, 'device-01-enter-code');
      await page.getByRole('button', { name: 'Continue' }).click();

      await expect(heading(page).textContent()).resolves.toBe(`Authorize ${APP_NAME}`);
      await expect(page.getByRole('main').textContent()).resolves.toContain(codes.user_code);
      await expect(page.getByRole('main').textContent()).resolves.toContain('repo');
      await screenshot(page, 'device-02-confirm');
      await page.getByRole('button', { name: `Authorize ${APP_NAME}` }).click();

      await expect(heading(page).textContent()).resolves.toBe("Congratulations, you're all set!");
      await screenshot(page, 'device-03-done');
    } finally {
      await context.close();
    }
    const token = await json(
      await fetch(
        `${stack.webUrl}/login/oauth/access_token`,
        form({
          client_id: app.clientId,
          device_code: codes.device_code,
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        }),
      ),
    );
    expect(token).toMatchObject({ scope: 'repo', token_type: 'bearer' });
    const me = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: `token ${token.access_token}` },
    });
    expect(await json(me)).toMatchObject({ login: 'octocat' });
  }, 30_000);
});
