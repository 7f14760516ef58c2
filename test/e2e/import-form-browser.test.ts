import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { launchBrowser, screenshot } from '#test/browser';
import { createUser } from '#test/fixtures';
import { createRepository, seedImport } from '#test/import-seed';
import { startTestStack } from '#test/stack';

/*
 * The import form in Chromium (issue 37): a person signs in, starts at the home page, follows
 * "Import a repository", fills the form for a Git origin on 127.0.0.1 and lands on the progress
 * page, which shows the import complete: once with JavaScript off (the form and the page work
 * without it), once with it on (the name is checked while typed). Then a wrong password
 * corrected on the progress page. Screenshots at 1280 and 390 px of the home page, the form with
 * a refusal and the 404 page.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let browser: Browser;
let origin: OriginServer;
let guarded: OriginServer;
let root: string;

const OWNER = 'monalisa';
const PASSWORD = 'monalisa-pass-12';
const SECRET = { username: 'reader', password: 'right-horse-battery' };

beforeAll(async () => {
  stack = await startTestStack();
  root = await mkdtemp(join(tmpdir(), 'import-form-browser-'));
  await makeFixtureRepository(join(root, 'project.git'), { commits: 4 });
  origin = await serveGitHttp(root);
  guarded = await serveGitHttp(root, { auth: SECRET });
  await createUser(stack.endpointsFile, OWNER, PASSWORD);
  // Repositories the home page lists, some with imports (the screenshots show them).
  for (const name of ['existing', 'archive-2019', 'a-repository-with-a-rather-long-name-for-narrow-screens'])
    await createRepository(stack.baseUrl, OWNER, PASSWORD, name);
  await seedImport(OWNER, 'archive-2019', { percent: 62 });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await origin?.close();
  await guarded?.close();
  await stack?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

/** Signs in through the page the home page links to, and lands on the home page. */
async function signIn(page: Page): Promise<void> {
  await page.goto(`${stack.webUrl}/`);
  await page.getByRole('link', { name: 'Sign in' }).first().click();
  await page.getByLabel('Username', { exact: true }).fill(OWNER);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === '/');
  await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Your repositories');
}

async function fillForm(
  page: Page,
  fields: { url: string; name: string; username?: string; password?: string },
) {
  await page.getByLabel('Its clone URL').fill(fields.url);
  if (fields.username) await page.locator('#vcs_username').fill(fields.username);
  if (fields.password) await page.locator('#vcs_password').fill(fields.password);
  await page.getByLabel(/^Name/).fill(fields.name);
}

const statusText = (page: Page) => page.locator('#import-status').textContent();

/** Reloads (the page's own Refresh link) until the import's status says `done`, without JavaScript. */
async function refreshUntil(page: Page, done: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await statusText(page))?.includes(done)) {
    if (Date.now() > deadline) throw new Error(`still ${await statusText(page)}`);
    await page.waitForTimeout(500);
    await page.reload();
  }
}

describe('the import form in Chromium', () => {
  let context: BrowserContext;

  it('without JavaScript: home page, form, progress page, complete', async () => {
    context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await signIn(page);
    await page.getByRole('link', { name: 'Import a repository' }).click();
    await page.waitForURL((url) => url.pathname === '/new/import');
    // A refusal first: the form comes back with the values and the message beside the name.
    await fillForm(page, { url: `${origin.url}/project.git`, name: 'existing' });
    await page.getByRole('button', { name: 'Begin import' }).click();
    await expect(page.locator('#name-status').textContent()).resolves.toBe(
      'You already have a repository named existing.',
    );
    await expect(page.getByLabel('Its clone URL').inputValue()).resolves.toBe(`${origin.url}/project.git`);
    await page.getByLabel(/^Name/).fill('moved-without-js');
    await page.getByRole('button', { name: 'Begin import' }).click();
    await page.waitForURL((url) => url.pathname === `/${OWNER}/moved-without-js/import`);
    await refreshUntil(page, 'Done');
    await page.goto(`${stack.webUrl}/`);
    await expect(page.locator('li[data-status="complete"] .repo-name').allTextContents()).resolves.toContain(
      `${OWNER}/moved-without-js`,
    );
    await context.close();
  });

  it('with JavaScript: the name is checked while typed, the progress page updates itself', async () => {
    context = await browser.newContext();
    const page = await context.newPage();
    const scriptErrors: string[] = [];
    page.on('pageerror', (error) => scriptErrors.push(error.message));
    await signIn(page);
    await page.getByRole('link', { name: 'Import a repository' }).click();
    await page.waitForURL((url) => url.pathname === '/new/import');
    await page.getByLabel(/^Name/).pressSequentially('existing');
    await page.locator('#name-status.field-error').waitFor();
    await expect(page.locator('#name-status').textContent()).resolves.toBe(
      'You already have a repository named existing.',
    );
    await expect(page.getByLabel(/^Name/).getAttribute('aria-invalid')).resolves.toBe('true');
    await page.getByLabel(/^Name/).fill('moved-with-js');
    await page.locator('#name-status.field-ok').waitFor();
    await expect(page.locator('#name-status').textContent()).resolves.toBe('moved-with-js is available.');
    await page.getByLabel('Its clone URL').fill(`${origin.url}/project.git`);
    await page.getByRole('button', { name: 'Begin import' }).click();
    await page.waitForURL((url) => url.pathname === `/${OWNER}/moved-with-js/import`);
    await page.locator('#import-status[data-final="true"]').waitFor({ timeout: 60_000 });
    await expect(statusText(page)).resolves.toContain('Done');
    expect(scriptErrors).toEqual([]);
    await context.close();
  });

  it('a wrong password is corrected on the progress page, and the import completes', async () => {
    context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page);
    await page.goto(`${stack.webUrl}/new/import`);
    await fillForm(page, {
      url: `${guarded.url}/project.git`,
      name: 'behind-a-password',
      username: SECRET.username,
      password: 'not-the-password',
    });
    await page.getByRole('button', { name: 'Begin import' }).click();
    await page.waitForURL((url) => url.pathname === `/${OWNER}/behind-a-password/import`);
    await page.getByRole('heading', { name: 'Credentials for the origin' }).waitFor({ timeout: 60_000 });
    await page.locator('#vcs-username').fill(SECRET.username);
    await page.getByLabel('Password or token').fill(SECRET.password);
    await page.getByRole('button', { name: 'Send credentials' }).click();
    await page.locator('#import-status[data-final="true"]').waitFor({ timeout: 60_000 });
    await expect(statusText(page)).resolves.toContain('Done');
    await context.close();
  });

  it.each([1280, 390])('screenshots at %i px: home page, form with a refusal, 404 page', async (width) => {
    context = await browser.newContext({ viewport: { width, height: 800 } });
    const page = await context.newPage();
    await signIn(page);
    await screenshot(page, `start-home-${width}`);
    const overflow = () => page.evaluate('document.documentElement.scrollWidth > window.innerWidth');
    await expect(overflow()).resolves.toBe(false);
    await page.goto(`${stack.webUrl}/new/import`);
    await fillForm(page, { url: 'http://10.0.0.8/private.git', name: 'bad name', username: 'someone' });
    await page.getByRole('button', { name: 'Begin import' }).click();
    await page.locator('#form-problems').waitFor();
    await screenshot(page, `start-form-errors-${width}`);
    await expect(overflow()).resolves.toBe(false);
    await page.goto(`${stack.webUrl}/no/such/page`);
    await screenshot(page, `start-not-found-${width}`);
    await expect(overflow()).resolves.toBe(false);
    await context.close();
  });
});
