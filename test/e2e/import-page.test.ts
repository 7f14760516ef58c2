import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getImport, listAuthors } from '#data/imports/items';
import { setImportReport } from '#data/imports/progress';
import { findingOf } from '#domain/import-report';
import { createUser } from '#test/fixtures';
import { advance, createRepository, seedImport } from '#test/import-seed';
import { json, startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/*
 * The import progress page over HTTP against the local service: who may see it, CSRF, and that
 * each form changes what the import service then reports (read with the data layer's functions,
 * the same reads the API answers from). Import state is seeded as the worker would write it.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type User = Awaited<ReturnType<typeof createUser>>;
let stack: Stack;
let owner: User;
let other: User;

const HOSTILE = '<img src=x onerror=alert(1)>';

beforeAll(async () => {
  stack = await startTestStack();
  owner = await createUser(stack.endpointsFile, 'importer', 'importer-pass-1');
  other = await createUser(stack.endpointsFile, 'stranger', 'stranger-pass-1');
});
afterAll(async () => {
  await stack?.stop();
});

/** What the import API answers the owner for `path` (under /repos/:owner/:repo/import). */
async function apiSees(repo: string, path = '') {
  const response = await fetch(`${stack.baseUrl}/repos/${owner.login}/${repo}/import${path}`, {
    headers: { Authorization: owner.auth, Accept: 'application/vnd.github.barred-rock-preview' },
  });
  return { status: response.status, body: await json(response) };
}

async function signIn(user: User): Promise<WebClient> {
  const browser = new WebClient(stack.webUrl);
  await browser.get('/login');
  const response = await browser.post('/login', { login: user.login, password: user.password });
  expect(response.status).toBe(303);
  return browser;
}

let repoCount = 0;
/** A new repository of the owner with an import in progress. */
async function repoWithImport(options: Parameters<typeof seedImport>[2] = {}) {
  const name = `imported-${++repoCount}`;
  await createRepository(stack.baseUrl, owner.login, owner.password, name);
  const seeded = await seedImport(owner.login, name, options);
  return { name, path: `/${owner.login}/${name}/import`, ...seeded };
}

describe('import progress page: access', () => {
  it('sends signed-out visitors to sign in and back; other users and absent imports get the same 404', async () => {
    const { path } = await repoWithImport();
    const anonymous = new WebClient(stack.webUrl);
    const page = await anonymous.get(path);
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(path)}`);
    await anonymous.get('/login');
    const post = await anonymous.post(`${path}/cancel`, {});
    expect(post.status).toBe(303);
    expect(post.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(path)}`);

    const stranger = await signIn(other);
    const seen = await stranger.get(path);
    expect(seen.status).toBe(404);
    const strangerPage = stranger.lastHtml;
    expect(strangerPage).not.toContain('origin.example');
    // Their POSTs change nothing and answer the same page.
    const cancel = await stranger.post(`${path}/cancel`, {});
    expect(cancel.status).toBe(404);
    expect(await getImport(owner.login, path.split('/')[2] ?? '')).toBeDefined();

    const mine = await signIn(owner);
    await createRepository(stack.baseUrl, owner.login, owner.password, 'never-imported');
    const absent = await mine.get(`/${owner.login}/never-imported/import`);
    expect(absent.status).toBe(404);
    const noRepo = await mine.get(`/${owner.login}/no-such-repo/import`);
    expect(noRepo.status).toBe(404);
    // The same words whatever the reason, so the page tells a stranger nothing.
    const text = (html: string) =>
      /<main id="main">([\s\S]*)<\/main>/.exec(html)?.[1]?.replace(/[\w.-]+\/[\w.-]+(?=\s|<| that)/g, 'X');
    expect(text(mine.lastHtml)).toBe(text(strangerPage));
  });

  it('shows the owner the status, the progress, the authors (hostile names as text) with security headers', async () => {
    const { path } = await repoWithImport({
      percent: 37,
      commitCount: 4321,
      authors: [
        {
          remoteId: `${HOSTILE} <evil@example.com>`,
          remoteName: HOSTILE,
          name: HOSTILE,
          email: 'evil@example.com',
        },
      ],
    });
    const browser = await signIn(owner);
    const response = await browser.get(path);
    expect(response.status).toBe(200);
    const html = browser.lastHtml;
    expect(html).toContain('Importing...');
    expect(html).toContain('37%, 4,321 commits');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    // The one script served is the one the CSP allows by hash.
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '');
    expect(scripts).toHaveLength(1);
    const hash = createHash('sha256')
      .update(scripts[0] ?? '')
      .digest('base64');
    expect(csp).toContain(`script-src 'sha256-${hash}'`);
    // Other pages stay script-free.
    const tokens = await browser.get('/settings/tokens');
    expect(tokens.headers.get('content-security-policy')).not.toContain('script-src');
  });
});

describe('import progress page: the report', () => {
  it('says in plain words what did not come over (names as text), the large files’ fate and the choices, as the API reports them', async () => {
    const { name, path, importId, attempt } = await repoWithImport({
      largeFiles: [
        { refName: 'refs/heads/main', path: 'media/big.iso', oid: 'e'.repeat(40), size: 157_286_400 },
      ],
    });
    const browser = await signIn(owner);
    await browser.get(path);
    expect(browser.lastHtml).toContain('Nothing is known yet');
    expect(browser.lastHtml).toContain('Empty directories are not kept.');

    await setImportReport(owner.login, name, importId, attempt, {
      rawDone: true,
      findings: {
        renamed_refs: findingOf([
          { kind: 'branch', origin_name: HOSTILE, ref: 'refs/heads/branches/_img-3f2a', reason: 'invalid' },
        ]),
        empty_directories: findingOf([{ path: 'a/' }, { path: 'b/c/' }, { path: 'd/' }]),
      },
    });
    const page = await browser.get(path);
    expect(page.status).toBe(200);
    const region = /<section id="import-report"[\s\S]*?<\/section>/.exec(browser.lastHtml)?.[0] ?? '';
    const words = region.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');
    expect(words).toContain(
      '1 branch, bookmark or tag was renamed (Git refuses their names, or they clash with another ref): &lt;img src=x onerror=alert(1)&gt; → branches/_img-3f2a.',
    );
    expect(words).toContain(
      '3 empty directories were not kept (Git stores no empty directories): a/, b/c/, d/.',
    );
    expect(words).toContain('1 file over the size limit (157.3 MB) waits for your choice');
    expect(words).toContain('(keep_refs_deleted_in_history: true)');
    expect(region).not.toContain('<img');
    // The API's report holds the same counts the page words.
    const api = await apiSees(name, '/report');
    expect(api.body).toMatchObject({
      renamed_refs_count: 1,
      empty_directories_count: 3,
      large_files_count: 1,
    });
  });
});

describe('import progress page: forms', () => {
  it('refuses a form without the CSRF token and changes nothing', async () => {
    const { name, path } = await repoWithImport({
      authors: [{ remoteId: 'Ann <ann@old>', remoteName: 'Ann', name: 'Ann', email: 'ann@old' }],
    });
    const browser = await signIn(owner);
    await browser.get(path);
    for (const [target, fields] of [
      [`${path}/authors/1`, { name: 'Changed', email: 'c@new' }],
      [`${path}/lfs`, { use_lfs: 'opt_in' }],
      [`${path}/restart`, {}],
      [`${path}/cancel`, {}],
    ] as const) {
      const refused = await browser.post(target, fields, { csrf: null });
      expect(refused.status, target).toBe(403);
      const forged = await browser.post(target, fields, { csrf: 'forged-token' });
      expect(forged.status, target).toBe(403);
    }
    const record = await getImport(owner.login, name);
    expect(record).toMatchObject({ attempt: 1, useLfs: 'undecided', status: 'importing' });
    const [ann] = await listAuthors(owner.login, name, record?.importId ?? 0, 0);
    expect(ann).toMatchObject({ name: 'Ann', email: 'ann@old' });
  });

  it('maps an author; a refused mapping shows the reason and keeps what was typed', async () => {
    const { name, path, importId } = await repoWithImport({
      authors: [{ remoteId: 'Ann <ann@old>', remoteName: 'Ann', name: 'Ann', email: 'ann@old' }],
    });
    const browser = await signIn(owner);
    await browser.get(path);
    const [before] = await listAuthors(owner.login, name, importId, 0);
    const mapped = await browser.post(`${path}/authors/${before?.id}`, {
      name: 'Ann Smith',
      email: 'ann@new.example',
    });
    expect(mapped.status).toBe(303);
    expect(mapped.headers.get('location')).toBe(path);
    const [after] = await listAuthors(owner.login, name, importId, 0);
    expect(after).toMatchObject({ remoteId: 'Ann <ann@old>', name: 'Ann Smith', email: 'ann@new.example' });
    expect((await apiSees(name, '/authors')).body).toEqual([
      expect.objectContaining({
        id: before?.id,
        remote_id: 'Ann <ann@old>',
        name: 'Ann Smith',
        email: 'ann@new.example',
      }),
    ]);
    await browser.get(path);
    expect(browser.lastHtml).toContain('value="ann@new.example"');

    const refused = await browser.post(`${path}/authors/${before?.id}`, {
      name: 'Ann',
      email: 'not an email',
    });
    expect(refused.status).toBe(422);
    expect(browser.lastHtml).toContain('role="alert"');
    expect(browser.lastHtml).toContain('value="not an email"');
    const unknown = await browser.post(`${path}/authors/999`, { name: 'Nobody' });
    expect(unknown.status).toBe(404);
    const [unchanged] = await listAuthors(owner.login, name, importId, 0);
    expect(unchanged?.email).toBe('ann@new.example');
  });

  it('stores the LFS choice, which the page then shows', async () => {
    const { name, path } = await repoWithImport({
      largeFiles: [{ refName: 'refs/heads/main', path: 'video.mp4', oid: 'c'.repeat(40), size: 150_000_000 }],
    });
    const browser = await signIn(owner);
    await browser.get(path);
    expect(browser.lastHtml).toContain('video.mp4');
    expect(browser.lastHtml).toContain('not chosen yet');
    const chosen = await browser.post(`${path}/lfs`, { use_lfs: 'opt_in' });
    expect(chosen.status).toBe(303);
    expect((await getImport(owner.login, name))?.useLfs).toBe('opt_in');
    expect((await apiSees(name)).body.use_lfs).toBe('opt_in');
    await browser.get(path);
    expect(browser.lastHtml).toMatch(/id="use-lfs-opt_in"[^>]*checked/);
    const bad = await browser.post(`${path}/lfs`, { use_lfs: 'maybe' });
    expect(bad.status).toBe(422);
    expect((await getImport(owner.login, name))?.useLfs).toBe('opt_in');
  });

  it('explains an error with its step and message, restarts into a new attempt, and cancels', async () => {
    const { name, path } = await repoWithImport();
    await advance(owner.login, name, { status: 'error', errorMessage: 'The origin closed the connection' });
    const browser = await signIn(owner);
    await browser.get(path);
    expect(browser.lastHtml).toContain('Import failed');
    expect(browser.lastHtml).toContain('failed during the raw import step');
    expect(browser.lastHtml).toContain('The origin closed the connection');
    expect(browser.lastHtml).toContain('data-final="true"');

    // Restart begins attempt 2 (locally no state machine runs it, so it ends in `error` at once
    // and the page says so; with the workflow it would be importing).
    const restarted = await browser.post(`${path}/restart`, {});
    expect([303, 503]).toContain(restarted.status);
    expect((await getImport(owner.login, name))?.attempt).toBe(2);
    expect((await apiSees(name)).status).toBe(200);

    await browser.get(path);
    const cancelled = await browser.post(`${path}/cancel`, {});
    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.get('location')).toBe(path);
    expect(await getImport(owner.login, name)).toBeUndefined();
    expect((await apiSees(name)).status).toBe(404);
    const after = await browser.get(path);
    expect(after.status).toBe(404);
    expect(browser.lastHtml).toContain('There is no import for');
  });
});
