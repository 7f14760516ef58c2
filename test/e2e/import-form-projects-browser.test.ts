import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { makeDumpProjectsRoot } from '#local/svn-projects-root';
import { launchBrowser, screenshot } from '#test/browser';
import { createUser } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { basicAuth, startTestStack } from '#test/stack';

/*
 * The import form in Chromium for a Subversion root of several projects (issue 37): a person
 * signs in, follows "Import a repository" from the home page, gives the root's URL and a name;
 * the progress page says several projects were found and offers them with boxes to tick and
 * editable names. Without JavaScript: one project unticked, another renamed, "Import the ones
 * ticked", the batch's dashboard refreshed until every import is Complete; then the repositories
 * through the API and `git ls-remote` over the stack's HTTP. With JavaScript: "Import all".
 * Screenshots of the project choice at 1280 and 390 px.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let browser: Browser;
let svn: SvnServer;
let work: string;
let git: Awaited<ReturnType<typeof gitClient>>;

const OWNER = 'monalisa';
const PASSWORD = 'monalisa-pass-12';
const PROJECTS = ['deletion', 'retag', 'replace'] as const;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'import-form-projects-'));
  await makeDumpProjectsRoot(work, PROJECTS);
  svn = await serveSvn(work);
  stack = await startTestStack();
  await createUser(stack.endpointsFile, OWNER, PASSWORD);
  git = await gitClient();
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await svn?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

async function signIn(page: Page): Promise<void> {
  await page.goto(`${stack.webUrl}/`);
  await page.getByRole('link', { name: 'Sign in' }).first().click();
  await page.getByLabel('Username', { exact: true }).fill(OWNER);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === '/');
}

/** Home page, "Import a repository", the root's URL and `name`: lands on the progress page. */
async function beginImport(page: Page, name: string): Promise<void> {
  await signIn(page);
  await page.getByRole('link', { name: 'Import a repository' }).click();
  await page.waitForURL((url) => url.pathname === '/new/import');
  await page.getByLabel('Its clone URL').fill(svn.url('root'));
  await page.getByLabel(/^Name/).fill(name);
  await page.getByRole('button', { name: 'Begin import' }).click();
  await page.waitForURL((url) => url.pathname === `/${OWNER}/${name}/import`);
}

/** Reloads until `ready` holds (without JavaScript the page's own Refresh link does the same). */
async function reloadUntil(page: Page, ready: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what}: not yet at ${page.url()}`);
    await page.waitForTimeout(500);
    await page.reload();
  }
}

const statusOf = (page: Page) => page.locator('#import-status').getAttribute('data-status');

/** The dashboard's repositories, once every import of the batch is complete. */
async function untilAllComplete(page: Page): Promise<string[]> {
  const rows = page.locator('tbody tr[id^="entry-"]');
  const complete = async () => {
    const statuses = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-status')));
    if (statuses.includes('error')) throw new Error(`an import failed: ${await page.content()}`);
    return statuses.length > 0 && statuses.every((status) => status === 'complete');
  };
  // The dashboard does not update itself (with JavaScript on it has no Refresh link either): reload.
  await reloadUntil(page, complete, 'every import complete');
  return (await rows.locator(':is(th, td):first-child').allTextContents()).map((text) => text.trim());
}

async function repositoryExists(name: string): Promise<boolean> {
  const response = await fetch(`${stack.baseUrl}/repos/${OWNER}/${name}`, {
    headers: { Authorization: basicAuth(OWNER, PASSWORD) },
  });
  await response.body?.cancel();
  expect([200, 404]).toContain(response.status);
  return response.status === 200;
}

describe('the import form in Chromium, for a Subversion root of several projects', () => {
  it('without JavaScript: one unticked, one renamed, "Import the ones ticked", all complete', async () => {
    const context = await browser.newContext({
      javaScriptEnabled: false,
      viewport: { width: 1280, height: 800 },
    });
    const page = await context.newPage();
    await beginImport(page, 'svn-root');
    await reloadUntil(
      page,
      async () => (await statusOf(page)) === 'detection_found_multiple',
      'project choice',
    );
    await expect(page.locator('#import-status').textContent()).resolves.toContain(
      'Several projects were found',
    );
    const batch = page.locator('form[action$="/import/batch"]');
    await expect(batch.getByRole('checkbox').count()).resolves.toBe(PROJECTS.length);
    await expect(batch.getByRole('button', { name: `Import all ${PROJECTS.length}` }).count()).resolves.toBe(
      1,
    );
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await screenshot(page, `projects-choice-${width}`);
      await expect(page.evaluate('document.documentElement.scrollWidth > window.innerWidth')).resolves.toBe(
        false,
      );
    }
    await batch.getByRole('checkbox', { name: 'retag' }).uncheck();
    await batch.getByLabel('Repository for replace').fill('replaced-dirs');
    await batch.getByRole('button', { name: 'Import the ones ticked' }).click();
    await page.waitForURL((url) => /^\/imports\/batches\/\d+$/.test(url.pathname));
    const repositories = await untilAllComplete(page);
    expect(repositories).toHaveLength(2);
    await expect(page.locator('tbody').textContent()).resolves.toContain('Complete');

    expect(await repositoryExists('svn-root')).toBe(true);
    expect(await repositoryExists('replaced-dirs')).toBe(true);
    expect(await repositoryExists('replace')).toBe(false);
    expect(await repositoryExists('retag')).toBe(false);
    const refs = await remoteRefs(git, `${stack.webUrl}/${OWNER}/replaced-dirs.git`);
    // The project's trunk is the branch main (the Subversion adapter's layout).
    expect(
      refs.some((line) => line.endsWith(' refs/heads/main')),
      refs.join('\n'),
    ).toBe(true);
    await context.close();
  }, 90_000);

  it('with JavaScript: the page updates itself, "Import all" makes one repository per project', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const scriptErrors: string[] = [];
    page.on('pageerror', (error) => scriptErrors.push(error.message));
    await beginImport(page, 'svn-all');
    await page.locator('#import-status[data-status="detection_found_multiple"]').waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: `Import all ${PROJECTS.length}` }).click();
    await page.waitForURL((url) => /^\/imports\/batches\/\d+$/.test(url.pathname));
    await expect(untilAllComplete(page)).resolves.toHaveLength(PROJECTS.length);
    // The first project goes into the import's own repository, the others under their own names.
    for (const name of ['svn-all', 'retag', 'replace']) expect(await repositoryExists(name), name).toBe(true);
    expect(await repositoryExists('deletion')).toBe(false);
    expect(scriptErrors).toEqual([]);
    await context.close();
  }, 90_000);
});
