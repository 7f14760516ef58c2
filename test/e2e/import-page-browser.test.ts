import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getImport, listAuthors } from '#data/imports/items';
import { addAuthors, setImportReport } from '#data/imports/progress';
import { findingOf } from '#domain/import-report';
import { launchBrowser, screenshot } from '#test/browser';
import { createUser } from '#test/fixtures';
import { advance, createRepository, seedImport } from '#test/import-seed';
import { startTestStack } from '#test/stack';

/*
 * The import progress page in Chromium (Debian's, driven by playwright-core): sign in on the way
 * to the page, map an author with the keyboard alone, make the LFS choice, watch the worker's
 * progress (written to the table behind the page) arrive without a reload, and cancel.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let browser: Browser;

const OWNER = 'mona';
const PASSWORD = 'mona-import-pass-1';
const REPO = 'octo-history';
const HOSTILE = '<img src=x onerror=alert(1)>';

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, OWNER, PASSWORD);
  await createRepository(stack.baseUrl, OWNER, PASSWORD, REPO);
  await seedImport(OWNER, REPO, {
    percent: 35,
    commitCount: 1200,
    authors: [
      {
        remoteId: `${HOSTILE} <hostile@example.com>`,
        remoteName: HOSTILE,
        name: HOSTILE,
        email: 'hostile@example.com',
      },
      { remoteId: 'ann <ann@old.example>', remoteName: 'ann', name: 'ann', email: 'ann@old.example' },
    ],
    largeFiles: [
      { refName: 'refs/heads/main', path: 'assets/video.mp4', oid: 'd'.repeat(40), size: 157_286_400 },
    ],
  });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

const pagePath = `/${OWNER}/${REPO}/import`;

/** The id of the focused element (the page has no DOM types here: playwright's `:focus`). */
const focusedId = (page: Page) => page.locator(':focus').getAttribute('id');

/** Presses Tab until the element with `id` has the focus (the keyboard's way there). */
async function tabTo(page: Page, id: string, limit = 60): Promise<number> {
  for (let presses = 1; presses <= limit; presses++) {
    await page.keyboard.press('Tab');
    if ((await focusedId(page)) === id) return presses;
  }
  throw new Error(`Tab never reached #${id}`);
}

describe('the import progress page in Chromium', () => {
  it('maps an author by keyboard, chooses LFS, updates live without a reload, shows hostile names as text, cancels', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    const scriptErrors: string[] = [];
    page.on('pageerror', (error) => scriptErrors.push(error.message));
    page.on('console', (message) => {
      // The browser's own favicon request is the only 404 expected; anything else is a fault.
      if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico'))
        scriptErrors.push(`${message.text()} ${message.location().url}`);
    });

    // Signed out: the page sends the browser to sign in, and back.
    await page.goto(`${stack.webUrl}${pagePath}`);
    await page.waitForURL((url) => url.pathname === '/login');
    await page.getByLabel('Username', { exact: true }).fill(OWNER);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === pagePath);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      `Import into ${OWNER}/${REPO}`,
    );
    await expect(page.getByRole('status').textContent()).resolves.toContain('Importing...');
    await expect(page.getByText(HOSTILE, { exact: true }).first().isVisible()).resolves.toBe(true);
    await screenshot(page, 'import-01-progress');

    // Keyboard only: Tab to ann's name field, type, Tab to email, type, Tab to the button, Enter.
    const [, ann] = await listAuthors(OWNER, REPO, (await getImport(OWNER, REPO))?.importId ?? 0, 0);
    const field = `author-${ann?.id}`;
    const presses = await tabTo(page, `${field}-name`);
    expect(presses).toBeGreaterThan(1);
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('Ann Example');
    await page.keyboard.press('Tab');
    await expect(focusedId(page)).resolves.toBe(`${field}-email`);
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('ann@example.com');
    await page.keyboard.press('Tab');
    await expect(page.locator(':focus').textContent()).resolves.toBe('Map ann');
    // Focus is visible: the focused button has an outline.
    await expect(page.evaluate('getComputedStyle(document.activeElement).outlineStyle')).resolves.not.toBe(
      'none',
    );
    await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')]);
    const mapped = await listAuthors(OWNER, REPO, (await getImport(OWNER, REPO))?.importId ?? 0, 0);
    expect(mapped[1]).toMatchObject({
      remoteId: 'ann <ann@old.example>',
      name: 'Ann Example',
      email: 'ann@example.com',
    });
    await expect(page.locator(`#${field}`).textContent()).resolves.toContain('Ann Example');
    await screenshot(page, 'import-02-author-mapped');

    // The LFS choice.
    await expect(
      page.getByRole('region', { name: /Files over the size limit/ }).textContent(),
    ).resolves.toContain('assets/video.mp4');
    await page.getByLabel('Keep them, stored with Git LFS', { exact: false }).check();
    await Promise.all([
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Save large-file choice' }).click(),
    ]);
    expect((await getImport(OWNER, REPO))?.useLfs).toBe('opt_in');
    await expect(
      page.getByLabel('Keep them, stored with Git LFS', { exact: false }).isChecked(),
    ).resolves.toBe(true);

    // Live: the worker's writes appear without a reload (no navigation of the main frame).
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    await page.evaluate("window.marker = 'same document'");
    const record = await getImport(OWNER, REPO);
    await advance(OWNER, REPO, { percent: 80, commitCount: 5000 });
    await addAuthors(OWNER, REPO, record?.importId ?? 0, record?.attempt ?? 0, [
      { remoteId: 'bo <bo@example.com>', remoteName: 'bo', name: 'bo', email: 'bo@example.com' },
    ]);
    await page.locator('#progress-raw-text', { hasText: '80%, 5,000 commits' }).waitFor({ timeout: 8000 });
    await page.getByRole('cell', { name: /^bo/ }).first().waitFor({ timeout: 8000 });
    await setImportReport(OWNER, REPO, record?.importId ?? 0, record?.attempt ?? 0, {
      rawDone: false,
      findings: { empty_directories: findingOf([{ path: 'a/' }, { path: 'b/c/' }]) },
    });
    await page
      .getByRole('region', { name: 'What did not come over as it was' })
      .filter({ hasText: '2 empty directories were not kept (Git stores no empty directories): a/, b/c/.' })
      .waitFor({ timeout: 8000 });
    await advance(OWNER, REPO, { status: 'pushing', pushPercent: 40 });
    await page.getByRole('status').filter({ hasText: 'Pushing...' }).waitFor({ timeout: 8000 });
    await expect(page.locator('#progress-push').getAttribute('value')).resolves.toBe('40');
    await expect(page.locator('#progress-raw').getAttribute('value')).resolves.toBe('100');
    expect(navigations).toBe(0);
    await expect(page.evaluate('window.marker')).resolves.toBe('same document');
    await screenshot(page, 'import-03-live-update');

    // The hostile name is text: no image element was made and no dialog opened.
    await expect(page.locator('main img').count()).resolves.toBe(0);
    await expect(page.getByText(HOSTILE, { exact: true }).first().isVisible()).resolves.toBe(true);
    expect(dialogs).toEqual([]);
    expect(scriptErrors).toEqual([]);

    // Cancel.
    await Promise.all([
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Cancel import' }).click(),
    ]);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Not Found');
    await expect(page.getByRole('main').textContent()).resolves.toContain(
      `There is no import for ${OWNER}/${REPO}`,
    );
    expect(await getImport(OWNER, REPO)).toBeUndefined();
    await screenshot(page, 'import-04-cancelled');
    await context.close();
  });
});
