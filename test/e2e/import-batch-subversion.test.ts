import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { addSvnRevision, makeSvnProjectsRoot, projectNames } from '#local/svn-projects-root';
import { launchBrowser, screenshot } from '#test/browser';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/*
 * Issue 37's test "a batch of 20 Subversion projects built from real dumps, followed and then cut
 * over from the dashboard": a root of twenty projects made of the third-party dumps in
 * test/fixtures/svn (lib/local/svn-projects-root.ts), served by svnserve on 127.0.0.1, imported
 * as one batch through the API with the real workflow and following on demand; a new revision in
 * two projects; Sync now and Cut over pressed on the dashboard in Chromium (JavaScript off: plain
 * forms); the two repositories show the new commit to git, and all twenty are cut over.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let svn: SvnServer;
let work: string;
let token: string;
let chromium: Browser;
let git: Awaited<ReturnType<typeof gitClient>>;

const LOGIN = 'migrator';
const PASSWORD = 'migrator-pass-1';
const PROJECTS = projectNames(20);
const CHANGED = ['project-03', 'project-11'] as const;
const repoPath = () => join(work, 'root');

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'svn-batch-e2e-'));
  [stack] = await Promise.all([startTestStack(), makeSvnProjectsRoot(repoPath(), PROJECTS.length)]);
  svn = await serveSvn(work);
  const user = await createUser(stack.endpointsFile, LOGIN, PASSWORD);
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
  [chromium, git] = await Promise.all([launchBrowser(), gitClient()]);
}, 120_000);
afterAll(async () => {
  await chromium?.close();
  await svn?.close();
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Each project's import and sync resource, as the API answers them. */
async function states() {
  return Promise.all(
    PROJECTS.map(async (repo) => {
      const [record, sync] = await Promise.all([
        api('GET', `/repos/${LOGIN}/${repo}/import`),
        api('GET', `/repos/${LOGIN}/${repo}/import/sync`),
      ]);
      return { repo, status: record.body?.status as string | undefined, sync: sync.body ?? {} };
    }),
  );
}

/** Polls until every project passes `done`; fails at once on an import error. */
async function untilAll(
  done: (state: Awaited<ReturnType<typeof states>>[number]) => boolean,
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  let last: Awaited<ReturnType<typeof states>> = [];
  while (Date.now() < deadline) {
    last = await states();
    const failed = last.find((state) => state.status === 'error');
    if (failed) throw new Error(`${failed.repo} failed: ${JSON.stringify(failed)}`);
    if (last.every(done)) return last;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error(
    `not all done: ${JSON.stringify(last.filter((state) => !done(state)).map((s) => [s.repo, s.status, s.sync.state]))}`,
  );
}

/** The signed-in dashboard in a page of `width` px, JavaScript off (the forms work without it). */
async function dashboard(batchPath: string, width: number): Promise<Page> {
  const context = await chromium.newContext({ javaScriptEnabled: false, viewport: { width, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${stack.webUrl}${batchPath}`);
  await page.waitForURL((url) => url.pathname === '/login');
  await page.getByLabel('Username', { exact: true }).fill(LOGIN);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === batchPath);
  return page;
}

const countOf = async (page: Page, id: string) =>
  Number(await page.locator(`#count-${id} strong`).textContent());

/** The file list of `main` in the hosted repository, through a real clone. */
async function trunkFiles(repo: string): Promise<string[]> {
  const dir = join(work, `clone-${repo}-${Date.now()}`);
  const clone = await git(['clone', '--quiet', `${stack.webUrl}/${LOGIN}/${repo}.git`, dir]);
  expect(clone.code, clone.stderr).toBe(0);
  const files = await git(['ls-tree', '-r', '--name-only', 'HEAD'], { cwd: dir });
  await rm(dir, { recursive: true, force: true });
  return files.stdout.split('\n').filter((line) => line !== '');
}

describe('a batch of 20 Subversion projects from real dumps', () => {
  it('imports all 20 following their origins, syncs two new revisions and cuts all over from the dashboard', async () => {
    const created = await api('POST', '/user/import-batches', {
      vcs_url: svn.url('root'),
      vcs: 'subversion',
      projects: PROJECTS,
      follow: { interval_minutes: null },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const batchId = Number(created.body.id);
    const batchPath = `/imports/batches/${batchId}`;

    await untilAll((state) => state.status === 'complete' && state.sync.state === 'following', 150_000);
    const before = await Promise.all(CHANGED.map(trunkFiles));
    for (const files of before) expect(files).not.toContain('NEWS');

    const page = await dashboard(batchPath, 1280);
    await expect(countOf(page, 'complete')).resolves.toBe(20);
    await expect(countOf(page, 'following')).resolves.toBe(20);
    await expect(page.locator('tr[id^="entry-"]').count()).resolves.toBe(20);
    await screenshot(page, 'batch-dashboard-1280-following');

    // Two projects gain a revision on their trunk; Sync now on the dashboard syncs all.
    for (const project of CHANGED) await addSvnRevision(repoPath(), project, 'NEWS', `News of ${project}\n`);
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Sync now' }).click()]);
    await expect(page.locator('#batch-notice').textContent()).resolves.toContain(
      'A sync started for 20 imports',
    );
    const synced = await untilAll(
      (state) => state.status === 'complete' && state.sync.last_sync?.status === 'succeeded',
      90_000,
    );
    for (const state of synced)
      expect(state.sync.last_sync.new_commits, state.repo).toBe(
        (CHANGED as readonly string[]).includes(state.repo) ? 1 : 0,
      );
    for (const project of CHANGED) expect(await trunkFiles(project)).toContain('NEWS');

    // Cut over: the confirmation says what it means; its button cuts all twenty over.
    await page.reload();
    await Promise.all([
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Cut over', exact: true }).click(),
    ]);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      `Cut over 20 repositories of batch ${batchId}?`,
    );
    await Promise.all([
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Cut over for good' }).click(),
    ]);
    await expect(page.locator('#batch-notice').textContent()).resolves.toContain('20 imports were cut over');
    await expect(countOf(page, 'cut-over')).resolves.toBe(20);
    await screenshot(page, 'batch-dashboard-1280-cut-over');
    for (const state of await states()) expect(state.sync.state, state.repo).toBe('cut_over');

    const narrow = await dashboard(batchPath, 390);
    await expect(countOf(narrow, 'cut-over')).resolves.toBe(20);
    await screenshot(narrow, 'batch-dashboard-390-cut-over');
  }, 300_000);
});
