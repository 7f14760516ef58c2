import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getImport } from '#data/imports/items';
import { enterStatus } from '#data/imports/progress';
import { recordSyncOutcome } from '#data/imports/sync';
import { launchBrowser, screenshot } from '#test/browser';
import { createUser } from '#test/fixtures';
import { createRepository, seedImport } from '#test/import-seed';
import { json, startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/*
 * The progress page's "Following the origin" section (issue 27) over HTTP with a web session and
 * in Chromium with JavaScript off: what it shows in each state (compared with what the API's
 * GET …/import/sync answers), following, Sync now, Cut over through its confirmation, refusals
 * shown on the page, CSRF and other users. The idle workflow fixture stands in for the worker
 * (a sync's execution starts and stays running); import and sync outcomes are written with the
 * worker's own data functions.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type User = Awaited<ReturnType<typeof createUser>>;
let stack: Stack;
let owner: User;
let other: User;
let chromium: Browser;

const IDLE = fileURLToPath(new URL('../fixtures/import-idle.asl.json', import.meta.url));

beforeAll(async () => {
  stack = await startTestStack({ importStateMachine: { name: 'Import', definitionFile: IDLE, tasks: {} } });
  [owner, other] = await Promise.all([
    createUser(stack.endpointsFile, 'follower', 'follower-pass-1'),
    createUser(stack.endpointsFile, 'outsider', 'outsider-pass-1'),
  ]);
  chromium = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await chromium?.close();
  await stack?.stop();
});

/** The sync resource the API answers the owner. */
async function apiSync(repo: string) {
  const response = await fetch(`${stack.baseUrl}/repos/${owner.login}/${repo}/import/sync`, {
    headers: { Authorization: owner.auth, Accept: 'application/vnd.github.barred-rock-preview' },
  });
  expect(response.status).toBe(200);
  return json(response);
}

async function signIn(user: User): Promise<WebClient> {
  const browser = new WebClient(stack.webUrl);
  await browser.get('/login');
  const response = await browser.post('/login', { login: user.login, password: user.password });
  expect(response.status).toBe(303);
  return browser;
}

let repoCount = 0;
/** A repository of the owner with an import of 250 commits, `complete` unless asked otherwise. */
async function imported({ complete = true } = {}) {
  const name = `followed-${++repoCount}`;
  await createRepository(stack.baseUrl, owner.login, owner.password, name);
  const { importId, attempt } = await seedImport(owner.login, name, { commitCount: 250 });
  if (complete)
    expect(await enterStatus(owner.login, name, attempt, 'complete')).toMatchObject({ status: 'complete' });
  return { name, importId, path: `/${owner.login}/${name}/import` };
}

/** The section's markup, and its text with tags dropped and spaces folded. */
function following(html: string) {
  const markup = /<section id="import-following"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
  return { markup, words: markup.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ') };
}

/** Every visible field has a label, and the section and its forms have headings. */
function expectAccessible(markup: string) {
  expect(markup).toContain('<h2 id="following-heading">Following the origin</h2>');
  for (const [input] of markup.matchAll(/<input(?![^>]*type="hidden")[^>]*>/g)) {
    const id = /id="([^"]+)"/.exec(input)?.[1];
    expect(id, input).toBeDefined();
    expect(markup, input).toContain(`<label for="${id}">`);
  }
  for (const [form] of markup.matchAll(/<form[^>]*>/g)) expect(form).toMatch(/method="post"/);
  const buttons = [...markup.matchAll(/<button[^>]*>([^<]*)<\/button>/g)].map((m) => m[1]?.trim());
  expect(buttons.every((text) => text !== '')).toBe(true);
}

describe('import progress page: following the origin', () => {
  it('shows off, following (schedule, last and next sync, the outcome in words) and cut over as the API reports them', async () => {
    const early = await imported({ complete: false });
    const browser = await signIn(owner);
    await browser.get(early.path);
    const importing = following(browser.lastHtml);
    expect(importing.markup).toContain('data-state="off"');
    expect(importing.words).toContain('State: Off .');
    expect(importing.words).toContain('Once the import is complete, the repository can follow its origin');
    expect(importing.markup).not.toContain('<form');

    const { name, path, importId } = await imported();
    await browser.get(path);
    const off = following(browser.lastHtml);
    expect(off.words).toContain('State: Off . The repository does not follow its origin.');
    expect(off.markup).toContain('>Follow the origin</button>');
    expect(off.markup).not.toContain('Sync now</button>');
    expectAccessible(off.markup);

    // Follow every 90 minutes through the form.
    const followed = await browser.post(`${path}/follow`, { schedule: 'interval', interval_minutes: '90' });
    expect(followed.status).toBe(303);
    expect(followed.headers.get('location')).toBe(`${path}?notice=following`);
    const api = await apiSync(name);
    expect(api).toMatchObject({ state: 'following', interval_minutes: 90, last_sync: null });
    await browser.get(`${path}?notice=following`);
    expect(browser.lastHtml).toContain('The repository now follows its origin.');
    const on = following(browser.lastHtml);
    expect(on.markup).toContain('data-state="following"');
    expect(on.words).toContain('State: Following .');
    expect(on.words).toContain('Schedule Every 90 minutes');
    expect(on.words).toContain('Last synced Never');
    expect(on.words).toContain('Outcome of the last sync No sync yet.');
    const next = new Date(api.next_sync_at);
    const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July'];
    const monthNames = [...months, 'August', 'September', 'October', 'November', 'December'];
    const hhmm = `${String(next.getUTCHours()).padStart(2, '0')}:${String(next.getUTCMinutes()).padStart(2, '0')}`;
    expect(on.markup).toContain(
      `<time datetime="${api.next_sync_at}">${next.getUTCDate()} ${monthNames[next.getUTCMonth()]} ${next.getUTCFullYear()} at ${hhmm} UTC</time>`,
    );
    expect(on.markup).toContain('>Sync now</button>');
    expect(on.markup).toContain('>Cut over</button>');
    expectAccessible(on.markup);

    // On demand only: no next sync.
    const onDemand = await browser.post(`${path}/follow`, { schedule: 'on_demand', interval_minutes: '90' });
    expect(onDemand.headers.get('location')).toBe(`${path}?notice=schedule`);
    expect((await apiSync(name)).interval_minutes).toBeNull();
    await browser.get(path);
    expect(following(browser.lastHtml).words).toContain('Next sync None scheduled (on demand only).');
    expect(following(browser.lastHtml).markup).toMatch(/id="follow-on-demand"[^>]*checked/);

    // The worker records a sync that brought 3 new commits, then one that failed.
    await recordSyncOutcome(owner.login, name, importId, { commitCount: 253 });
    const synced = await apiSync(name);
    await browser.get(path);
    const succeeded = following(browser.lastHtml);
    expect(succeeded.words).toContain('Outcome of the last sync Succeeded with 3 new commits.');
    expect(succeeded.markup).toContain(`<time datetime="${synced.last_synced_at}">`);
    await recordSyncOutcome(owner.login, name, importId, {
      errorMessage: 'Fetching from the origin failed: <b>fatal</b>: repository not found',
    });
    await browser.get(path);
    const failed = following(browser.lastHtml);
    expect(failed.words).toContain(
      'Outcome of the last sync Failed: Fetching from the origin failed: &lt;b&gt;fatal&lt;/b&gt;: repository not found',
    );
    expect(failed.markup).not.toContain('<b>');
    // The last successful sync's time stays.
    expect(failed.markup).toContain(`<time datetime="${synced.last_synced_at}">`);

    // Cut over (through its confirmation): the state says when, and the forms are gone.
    await browser.post(`${path}/cut-over`, { confirm: 'cut-over' });
    const cut = await apiSync(name);
    expect(cut.state).toBe('cut_over');
    await browser.get(path);
    const after = following(browser.lastHtml);
    expect(after.markup).toContain('data-state="cut_over"');
    expect(after.words).toContain('State: Cut over . Cut over on');
    expect(after.markup).toContain(`<time datetime="${cut.cut_over_at}">`);
    expect(after.words).toContain('pushes are accepted');
    expect(after.markup).not.toContain('<form');
  });

  it('refuses a bad interval on the page (422) and changes nothing', async () => {
    const { name, path } = await imported();
    const browser = await signIn(owner);
    await browser.get(path);
    for (const interval of ['4', '', 'sixty', '5.5', '525601']) {
      const refused = await browser.post(`${path}/follow`, {
        schedule: 'interval',
        interval_minutes: interval,
      });
      expect(refused.status, interval).toBe(422);
      expect(browser.lastHtml).toContain('role="alert"');
      expect(browser.lastHtml).toContain(
        'Enter the minutes between syncs as a whole number from 5 to 525600',
      );
    }
    expect((await apiSync(name)).state).toBe('off');
  });

  it('syncs now (one execution, a notice), and shows 409 and 422 as readable notices, never an error page', async () => {
    const { name, path } = await imported();
    const browser = await signIn(owner);
    await browser.get(path);
    const notFollowing = await browser.post(`${path}/sync`, {});
    expect(notFollowing.status).toBe(422);
    expect(browser.lastHtml).toContain('role="alert"');
    expect(browser.lastHtml).toContain('The repository is not following its origin (state off)');
    expect(browser.lastHtml).toContain('<h2 id="following-heading">');

    await browser.post(`${path}/follow`, { schedule: 'on_demand' });
    await browser.get(path);
    const started = await browser.post(`${path}/sync`, {});
    expect(started.status).toBe(303);
    expect(started.headers.get('location')).toBe(`${path}?notice=sync-started`);
    const record = await getImport(owner.login, name);
    expect(record?.attempt).toBe(2);
    expect(record?.executionArn).toMatch(new RegExp(`:${owner.login}\\.${name}\\.sync-2$`));
    await browser.get(`${path}?notice=sync-started`);
    expect(browser.lastHtml).toContain('A sync has started');
    expect(browser.lastHtml).toContain('Importing...');

    const busy = await browser.post(`${path}/sync`, {});
    expect(busy.status).toBe(409);
    expect(browser.lastHtml).toContain('role="alert"');
    expect(browser.lastHtml).toContain('An import or sync attempt is under way; try again when it has ended');
    expect((await getImport(owner.login, name))?.attempt).toBe(2);
    const cutWhileBusy = await browser.post(`${path}/cut-over`, { confirm: 'cut-over' });
    expect(cutWhileBusy.status).toBe(409);
    expect(browser.lastHtml).toContain('A sync attempt is under way; cut over when it has ended');
    expect((await apiSync(name)).state).toBe('following');

    // An unknown notice key shows nothing.
    await browser.get(`${path}?notice=%3Cscript%3E`);
    expect(browser.lastHtml).not.toContain('id="import-notice"');
  });

  it('cuts over only after a confirmation that says what it means; a repository that does not follow gets a notice', async () => {
    const { name, path } = await imported();
    const browser = await signIn(owner);
    await browser.get(path);
    const offCut = await browser.post(`${path}/cut-over`, {});
    expect(offCut.status).toBe(422);
    expect(browser.lastHtml).toContain(
      'The repository is not following its origin; there is nothing to cut over',
    );

    await browser.post(`${path}/follow`, { schedule: 'interval', interval_minutes: '60' });
    await browser.get(path);
    const asked = await browser.post(`${path}/cut-over`, {});
    expect(asked.status).toBe(200);
    const question = browser.lastHtml;
    expect(question).toContain(`<h1>Cut over ${owner.login}/${name} from its origin?</h1>`);
    expect(question).toContain('The origin stops being followed');
    expect(question).toContain('Pushes to');
    expect(question).toContain('It cannot be undone');
    expect(question).toContain('<input type="hidden" name="confirm" value="cut-over">');
    expect(question).toContain(`<a href="${path}">Keep following</a>`);
    expect((await apiSync(name)).state).toBe('following');

    const done = await browser.post(`${path}/cut-over`, { confirm: 'cut-over' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`${path}?notice=cut-over`);
    expect((await apiSync(name)).state).toBe('cut_over');
    await browser.get(`${path}?notice=cut-over`);
    expect(browser.lastHtml).toContain('The repository was cut over');

    const syncAfter = await browser.post(`${path}/sync`, {});
    expect(syncAfter.status).toBe(422);
    expect(browser.lastHtml).toContain('(state cut_over)');
    const followAgain = await browser.post(`${path}/follow`, { schedule: 'on_demand' });
    expect(followAgain.status).toBe(422);
    expect(browser.lastHtml).toContain('cannot follow it again');
  });

  it('refuses each form without a valid CSRF token, and another user’s, changing nothing', async () => {
    const { name, path } = await imported();
    const browser = await signIn(owner);
    await browser.get(path);
    await browser.post(`${path}/follow`, { schedule: 'on_demand' });
    await browser.get(path);
    const before = await apiSync(name);
    const forms = [
      [`${path}/follow`, { schedule: 'interval', interval_minutes: '30' }],
      [`${path}/sync`, {}],
      [`${path}/cut-over`, {}],
      [`${path}/cut-over`, { confirm: 'cut-over' }],
    ] as const;
    for (const [target, fields] of forms) {
      expect((await browser.post(target, fields, { csrf: null })).status, target).toBe(403);
      expect((await browser.post(target, fields, { csrf: 'forged-token' })).status, target).toBe(403);
    }

    const stranger = await signIn(other);
    const seen = await stranger.get(path);
    expect(seen.status).toBe(404);
    expect(stranger.lastHtml).not.toContain('Following the origin');
    for (const [target, fields] of forms) {
      const refused = await stranger.post(target, fields);
      expect(refused.status, target).toBe(404);
      expect(stranger.lastHtml).not.toContain('What cut-over means');
    }
    expect(await apiSync(name)).toEqual(before);
    expect((await getImport(owner.login, name))?.attempt).toBe(1);
  });

  it('in Chromium with JavaScript off: follows, syncs now and cuts over by its labelled controls and the confirmation', async () => {
    const { name, path } = await imported();
    const context = await chromium.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${stack.webUrl}${path}`);
    await page.getByLabel('Username', { exact: true }).fill(owner.login);
    await page.getByLabel('Password', { exact: true }).fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === path);

    const region = page.getByRole('region', { name: 'Following the origin' });
    await expect(region.textContent()).resolves.toContain('The repository does not follow its origin');
    await region.getByLabel('On a schedule').check();
    await region.getByLabel('Minutes between syncs').fill('45');
    await region.getByRole('button', { name: 'Follow the origin' }).click();
    await page.waitForURL((url) => url.search === '?notice=following');
    await expect(region.getByRole('group', { name: 'When to sync' }).isVisible()).resolves.toBe(true);
    await expect(region.textContent()).resolves.toContain('Every 45 minutes');
    expect((await apiSync(name)).interval_minutes).toBe(45);
    await screenshot(page, 'import-following-01-following');

    await region.getByRole('button', { name: 'Sync now' }).click();
    await page.waitForURL((url) => url.search === '?notice=sync-started');
    await expect(page.getByText('A sync has started').isVisible()).resolves.toBe(true);
    expect((await getImport(owner.login, name))?.executionArn).toMatch(/\.sync-2$/);

    await region.getByRole('button', { name: 'Cut over' }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      `Cut over ${owner.login}/${name} from its origin?`,
    );
    await expect(page.getByRole('heading', { name: 'What cut-over means' }).isVisible()).resolves.toBe(true);
    await screenshot(page, 'import-following-02-confirm');
    expect((await apiSync(name)).state).toBe('following');
    await page.getByRole('link', { name: 'Keep following' }).click();
    await page.waitForURL((url) => url.pathname === path && url.search === '');
    expect((await apiSync(name)).state).toBe('following');

    // The sync has ended (the idle workflow runs no worker): only then may the owner cut over.
    expect(await enterStatus(owner.login, name, 2, 'complete')).toMatchObject({ status: 'complete' });
    await region.getByRole('button', { name: 'Cut over' }).click();
    await page.getByRole('button', { name: 'Cut over for good' }).click();
    await page.waitForURL((url) => url.search === '?notice=cut-over');
    await expect(region.textContent()).resolves.toContain('State: Cut over.');
    expect((await apiSync(name)).state).toBe('cut_over');
    await screenshot(page, 'import-following-03-cut-over');
    await context.close();
  });

  it('in Chromium with JavaScript on: a sync started with Sync now shows its outcome without a reload, though it is written after the status', async () => {
    const { name, path, importId } = await imported();
    const context = await chromium.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.webUrl}${path}`);
    await page.getByLabel('Username', { exact: true }).fill(owner.login);
    await page.getByLabel('Password', { exact: true }).fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === path);
    const region = page.getByRole('region', { name: 'Following the origin' });
    await region.getByLabel('On demand only', { exact: false }).check();
    await region.getByRole('button', { name: 'Follow the origin' }).click();
    await page.waitForURL((url) => url.search === '?notice=following');
    await region.getByRole('button', { name: 'Sync now' }).click();
    await page.waitForURL((url) => url.search === '?notice=sync-started');
    await page.getByRole('status').filter({ hasText: 'Importing...' }).waitFor();

    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    // As the Complete task does: the status first, the sync's outcome just after it.
    expect(await enterStatus(owner.login, name, 2, 'complete')).toMatchObject({ status: 'complete' });
    await page.getByRole('status').filter({ hasText: 'Done' }).waitFor({ timeout: 8000 });
    await recordSyncOutcome(owner.login, name, importId, { commitCount: 260 });
    await page
      .locator('#following-last-sync', { hasText: 'Succeeded with 10 new commits.' })
      .waitFor({ timeout: 8000 });
    expect(navigations).toBe(0);
    await context.close();
  });
});
