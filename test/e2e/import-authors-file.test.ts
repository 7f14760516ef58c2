import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { makeSvnRepository } from '#local/svn-fixtures';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { launchBrowser, screenshot } from '#test/browser';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { IMPORT_PREVIEW, importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/*
 * Authors files (issue 37, item 4) through HTTP and git: a Git origin whose 1,000 commits have
 * 1,000 authors (built by one `git fast-import`), imported through the API; a file of 1,000
 * entries applied with one PUT, in one rewrite; the hosted repository cloned over HTTP carries the
 * file's identities; downloads as authors.txt, CSV and .mailmap; the progress page filtered,
 * uploaded to and downloaded from, in Chromium too.
 */

const AUTHORS = 1000;
const OWNER = 'migrator';
const PASSWORD = 'migrator-pass-1';
const REPO = 'many-people';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let sfn: SFNClient;
let origin: OriginServer;
let svnserve: SvnServer | undefined;
let root: string;
let token: string;
let git: Awaited<ReturnType<typeof gitClient>>;
const cleanup: string[] = [];
/** Milliseconds measured for the notes: the PUT of 1,000 entries, the page at 1,000 authors. */
const timings: Record<string, number> = {};

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, `/repos/${OWNER}/${REPO}${path}`, body);

/** One commit per author: `Person N <pN@old.example>`, each adding a line to one file. */
function fastImportStream(count: number): string {
  const parts: string[] = [];
  for (let n = 0; n < count; n++) {
    const who = `Person ${n} <p${n}@old.example> ${1_600_000_000 + n * 60} +0000`;
    const message = `change ${n}\n`;
    const content = `line ${n}\n`;
    parts.push(
      `commit refs/heads/main\nauthor ${who}\ncommitter ${who}\ndata ${Buffer.byteLength(message)}\n${message}`,
      `M 644 inline file-${n % 10}.txt\ndata ${Buffer.byteLength(content)}\n${content}\n`,
    );
  }
  return parts.join('');
}

async function makeOrigin(dir: string): Promise<void> {
  const env = { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' };
  await promisify(execFile)('git', ['init', '-q', '--bare', '-b', 'main', dir], { env });
  await new Promise<void>((resolve, reject) => {
    const child = execFile('git', ['fast-import', '--quiet'], { cwd: dir, env }, (error) =>
      error ? reject(error) : resolve(),
    );
    child.stdin?.end(fastImportStream(AUTHORS));
  });
}

/** Polls the import until `done` holds; fails with the last import seen. */
async function until(done: (body: Record<string, unknown>) => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', '/import')).body;
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the import did not get there: ${JSON.stringify(last)}`);
}
const complete = (body: Record<string, unknown>) => body.status === 'complete';

/** How many attempts the import's workflow has run (each rewrite is one attempt's execution). */
async function executions(): Promise<number> {
  let count = 0;
  for (let attempt = 1; attempt < 20; attempt++) {
    const arn = `arn:aws:states:us-east-1:123456789012:execution:SourceImport:${OWNER}.${REPO}.attempt-${attempt}`;
    if (!(await sfn.send(new DescribeExecutionCommand({ executionArn: arn })).catch(() => undefined))) break;
    count++;
  }
  return count;
}

/** `author name <email>` of every commit of the hosted repository, cloned over HTTP. */
async function hostedIdentities(): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'authors-clone-'));
  cleanup.push(dir);
  const clone = await git(['clone', '-q', `${stack.webUrl}/${OWNER}/${REPO}.git`, dir]);
  expect(clone.code, clone.stderr).toBe(0);
  const log = await git(['log', '--format=%an <%ae>'], { cwd: dir });
  return log.stdout.trim().split('\n');
}

/** The 1,000-entry CSV: the first 995 people by their old email, and 5 who never committed. */
function thousandEntries(): string {
  const rows = ['origin,name,email'];
  for (let n = 0; n < AUTHORS - 5; n++)
    rows.push(`p${n}@old.example,"Person ${n}, Mapped",p${n}@new.example`);
  for (let n = 0; n < 5; n++) rows.push(`ghost${n},Ghost ${n},ghost${n}@new.example`);
  return `${rows.join('\r\n')}\r\n`;
}

beforeAll(async () => {
  stack = await startTestStack();
  sfn = new SFNClient({
    endpoint: stack.stepFunctionsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  git = await gitClient();
  root = await mkdtemp(join(tmpdir(), 'authors-origin-'));
  await makeOrigin(join(root, 'people.git'));
  origin = await serveGitHttp(root);
  const user = await createUser(stack.endpointsFile, OWNER, PASSWORD);
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name: REPO }),
  });
  expect(created.status).toBe(201);
  expect((await api('PUT', '/import', { vcs_url: `${origin.url}/people.git`, vcs: 'git' })).status).toBe(201);
  const done = await until(complete, 90_000);
  expect(done.authors_count).toBe(AUTHORS);
}, 150_000);

afterAll(async () => {
  console.log(`authors file timings (ms): ${JSON.stringify(timings)}`);
  await stack?.stop();
  await origin?.close();
  await svnserve?.close();
  await Promise.all(
    [root, ...cleanup].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })),
  );
});

describe('PUT /repos/:owner/:repo/import/authors', () => {
  it('refuses a file with bad lines, naming each line, and maps nothing', async () => {
    const refused = await api('PUT', '/import/authors', {
      content: 'p1 = Someone <p1@new.example>\nbroken line\np2 = Other <not-an-email>\n',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toBe('Validation Failed');
    expect(refused.body.errors).toEqual([
      expect.objectContaining({ resource: 'AuthorsFile', field: 'content', code: 'invalid', line: 2 }),
      expect.objectContaining({ resource: 'AuthorsFile', field: 'content', code: 'invalid', line: 3 }),
    ]);
    expect(refused.body.errors[0].message).toMatch(/^Line 2: /);
    expect(refused.body.documentation_url).toEqual(expect.any(String));
    expect((await api('PUT', '/import/authors', { format: 'yaml', content: 'x' })).status).toBe(422);
    expect(await executions()).toBe(1);
  });

  it('maps 1,000 entries in one rewrite and one push; the clone carries the new identities; again changes nothing', async () => {
    const before = await executions();
    const started = Date.now();
    const applied = await api('PUT', '/import/authors', { content: thousandEntries() });
    timings.put1000 = Date.now() - started;
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({ format: 'csv', rewriting: true, changed: AUTHORS - 5 });
    expect(applied.body.mapped).toHaveLength(AUTHORS - 5);
    expect(applied.body.mapped[0]).toMatchObject({
      remote_id: 'Person 0 <p0@old.example>',
      name: 'Person 0, Mapped',
      email: 'p0@new.example',
    });
    expect(
      applied.body.not_in_history.map((e: { origin: string; line: number }) => [e.origin, e.line]),
    ).toEqual(Array.from({ length: 5 }, (_, n) => [`ghost${n}`, AUTHORS - 5 + n + 2]));
    expect(applied.body.not_in_file.map((a: { remote_name: string }) => a.remote_name)).toEqual(
      Array.from({ length: 5 }, (_, n) => `Person ${AUTHORS - 5 + n}`),
    );
    await until(complete, 90_000);
    expect(await executions()).toBe(before + 1);

    const identities = await hostedIdentities();
    expect(identities).toHaveLength(AUTHORS);
    expect(identities).toContain('Person 0, Mapped <p0@new.example>');
    expect(identities).toContain(`Person ${AUTHORS - 6}, Mapped <p${AUTHORS - 6}@new.example>`);
    expect(identities).toContain(`Person ${AUTHORS - 1} <p${AUTHORS - 1}@old.example>`);
    expect(identities.filter((id) => id.endsWith('@new.example>'))).toHaveLength(AUTHORS - 5);

    const again = await api('PUT', '/import/authors', { content: thousandEntries() });
    expect(again.body).toMatchObject({ rewriting: false, changed: 0 });
    expect(again.body.mapped).toHaveLength(AUTHORS - 5);
    expect((await api('GET', '/import')).body.status).toBe('complete');
    expect(await executions()).toBe(before + 1);
  }, 150_000);

  it('loses nothing beside a concurrent PATCH of one author', async () => {
    const authors = (await api('GET', '/import/authors?per_page=100&page=10')).body as {
      id: number;
      remote_name: string;
    }[];
    const last = authors.find((a) => a.remote_name === `Person ${AUTHORS - 1}`);
    const [put, patch] = await Promise.all([
      api('PUT', '/import/authors', { content: 'Person 1 = Person One <one@new.example>\n' }),
      api('PATCH', `/import/authors/${last?.id}`, { name: 'Last Person', email: 'last@new.example' }),
    ]);
    expect(put.status).toBe(200);
    expect(patch.status).toBe(200);
    // Whichever lands during the other's rewrite makes Complete rewrite once more: wait for the
    // import to be complete with no further attempt starting.
    let identities: string[] = [];
    for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
      await until(complete, 90_000);
      const runs = await executions();
      identities = await hostedIdentities();
      if ((await api('GET', '/import')).body.status === 'complete' && (await executions()) === runs) break;
    }
    expect(identities).toContain('Person One <one@new.example>');
    expect(identities).toContain('Last Person <last@new.example>');
  }, 150_000);
});

describe('a Subversion import and git-svn’s authors.txt', () => {
  it('maps the logins and the (no author) entry; the clone shows the file’s identities', async () => {
    const svnRoot = join(root, 'svn');
    const made = await makeSvnRepository(join(svnRoot, 'std'));
    // A revision without svn:author: git-svn's `(no author)`.
    await promisify(execFile)('svnadmin', [
      'delrevprop',
      made.path,
      '-r',
      String(made.youngest),
      'svn:author',
    ]);
    svnserve = await serveSvn(svnRoot);
    const repo = 'svn-people';
    const call = (method: string, path: string, body?: unknown) =>
      importApiCall(stack.baseUrl, token, method, `/repos/${OWNER}/${repo}${path}`, body);
    const created = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: `token ${token}` },
      body: JSON.stringify({ name: repo }),
    });
    expect(created.status).toBe(201);
    expect((await call('PUT', '/import', { vcs_url: svnserve.url('std/repo') })).status).toBe(201);
    for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
      const status = (await call('GET', '/import')).body.status;
      if (status === 'complete' || status === 'error') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await call('GET', '/import')).body.status).toBe('complete');
    const authorsTxt = [
      '# git-svn authors file',
      'ada = Ada Lovelace <ada@example.org>',
      'bob = Bob Builder <bob@example.org>',
      '(no author) = Nobody <nobody@example.org>',
      'zed = Zed Unknown <zed@example.org>',
      '',
    ].join('\n');
    const applied = await call('PUT', '/import/authors', { format: 'authors_txt', content: authorsTxt });
    expect(applied.status).toBe(200);
    expect(applied.body.mapped.map((a: { remote_name: string }) => a.remote_name).sort()).toEqual([
      '(no author)',
      'ada',
      'bob',
    ]);
    expect(applied.body.not_in_history).toEqual([
      { line: 5, origin: 'zed', name: 'Zed Unknown', email: 'zed@example.org' },
    ]);
    expect(applied.body.not_in_file.map((a: { remote_name: string }) => a.remote_name)).toEqual(['carl']);
    for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
      if ((await call('GET', '/import')).body.status === 'complete') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const dir = await mkdtemp(join(tmpdir(), 'authors-svn-clone-'));
    cleanup.push(dir);
    expect((await git(['clone', '-q', `${stack.webUrl}/${OWNER}/${repo}.git`, dir])).code).toBe(0);
    const names = new Set(
      (await git(['log', '--all', '--format=%an <%ae>'], { cwd: dir })).stdout.trim().split('\n'),
    );
    expect(names).toContain('Ada Lovelace <ada@example.org>');
    expect(names).toContain('Bob Builder <bob@example.org>');
    expect(names).toContain('Nobody <nobody@example.org>');
    expect([...names].some((name) => name.startsWith('carl <carl@'))).toBe(true);
    expect([...names].some((name) => name.startsWith('(no author)'))).toBe(false);
  }, 150_000);
});

describe('GET /repos/:owner/:repo/import/authors?format=', () => {
  const download = (format: string) =>
    fetch(`${stack.baseUrl}/repos/${OWNER}/${REPO}/import/authors?format=${format}`, {
      headers: { Authorization: `token ${token}`, Accept: IMPORT_PREVIEW },
    });

  it('downloads authors.txt, CSV and .mailmap of the current mapping; the CSV sent back changes nothing', async () => {
    const txt = await download('authors_txt');
    expect(txt.status).toBe(200);
    expect(txt.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await txt.text();
    expect(text.split('\n').filter(Boolean)).toHaveLength(AUTHORS);
    expect(text).toContain('Person 1 = Person One <one@new.example>\n');

    const csv = await download('csv');
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="${REPO}-authors.csv"`);
    const csvText = await csv.text();
    expect(csvText).toContain('\r\nPerson 0,"Person 0, Mapped",p0@new.example\r\n');
    const back = await api('PUT', '/import/authors', { format: 'csv', content: csvText });
    expect(back.body).toMatchObject({ changed: 0, rewriting: false, not_in_file: [], not_in_history: [] });

    const mailmap = await (await download('mailmap')).text();
    expect(mailmap).toContain('Person 0, Mapped <p0@new.example> <p0@old.example>\n');
    expect(mailmap).not.toContain(`<p${AUTHORS - 2}@old.example>`);
    expect((await download('yaml')).status).toBe(422);
  });
});

describe('the progress page at 1,000 authors', () => {
  it('renders a page of authors with the tools, filters without JavaScript, and answers an upload with three lists', async () => {
    const web = new WebClient(stack.webUrl);
    await web.get('/login');
    expect((await web.post('/login', { login: OWNER, password: PASSWORD })).status).toBe(303);
    const path = `/${OWNER}/${REPO}/import`;
    let started = Date.now();
    const page = await web.get(path);
    timings.page1000 = Date.now() - started;
    expect(page.status).toBe(200);
    const html = web.lastHtml;
    expect(html).toContain(`Authors (${AUTHORS})`);
    expect(html).toContain(`action="${path}/authors"`);
    expect(html).toContain(`href="${path}/authors-file?format=mailmap"`);

    started = Date.now();
    expect((await web.get(`${path}?authors=person+99`)).status).toBe(200);
    timings.filteredPage1000 = Date.now() - started;
    // Person 99 and Person 990…999: 11 rows, and the links keep the filter.
    expect(web.lastHtml.match(/<tr id="author-\d+"/g)).toHaveLength(11);
    expect(web.lastHtml).toContain('11 matching “person 99”');
    expect((await web.get(`${path}?authors=p1&page=2`)).status).toBe(200);
    expect(web.lastHtml).toContain(`href="${path}?page=1&amp;authors=p1" rel="prev"`);

    const answer = await web.post(`${path}/authors`, {
      format: '',
      content: '# two people\nPerson 2 = Person Two <two@new.example>\nnobody = No Body <no@new.example>\n',
    });
    expect(answer.status).toBe(200);
    expect(web.lastHtml).toMatch(/<h2 id="authors-mapped-heading">Mapped \(1\)<\/h2>/);
    expect(web.lastHtml).toContain('Line 3: <code>nobody</code>');
    expect(web.lastHtml).toContain(`In the history, not in the file (${AUTHORS - 1})`);

    const refused = await web.post(`${path}/authors`, { format: 'csv', content: 'a,b\n' });
    expect(refused.status).toBe(422);
    expect(web.lastHtml).toContain('Line 1: expected 3 fields');
    await until(complete, 90_000);
  }, 120_000);
});

describe('the progress page in Chromium', () => {
  let browser: Browser;
  afterAll(async () => {
    await browser?.close();
  });

  it('uploads a file through the page, filters the table and downloads the .mailmap', async () => {
    browser = await launchBrowser();
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    await page.goto(`${stack.webUrl}/${OWNER}/${REPO}/import`);
    await page.getByLabel('Username', { exact: true }).fill(OWNER);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === `/${OWNER}/${REPO}/import`);

    await page.getByRole('textbox', { name: 'Filter authors' }).fill('Person 42');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get('authors') === 'Person 42');
    expect(await page.locator('#import-authors tbody tr').count()).toBe(11);
    await screenshot(page, 'import-authors-filtered');
    // At a phone's width the filter, upload and downloads fit the viewport.
    await page.setViewportSize({ width: 390, height: 844 });
    const toolsRight = await page.evaluate(
      `Math.max(...Array.from(document.querySelectorAll('#import-authors form[role=search] *, #import-authors form.panel *, #authors-downloads *')).map((e) => e.getBoundingClientRect().right))`,
    );
    expect(toolsRight).toBeLessThanOrEqual(390);
    await screenshot(page, 'import-authors-390');
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByLabel('Or paste its content').fill('Person 3 = Person Three <three@new.example>\n');
    await page.getByRole('button', { name: 'Map authors from the file' }).click();
    await page.getByRole('heading', { name: 'Mapped (1)' }).waitFor();
    expect(await page.locator('#authors-mapped').textContent()).toContain('Person Three <three@new.example>');
    await screenshot(page, 'import-authors-file-answer');

    await page.getByRole('link', { name: 'Back to the import' }).click();
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: '.mailmap' }).click(),
    ]);
    // The server names it `.mailmap`; Chromium drops a leading dot from the names it saves.
    expect(file.suggestedFilename()).toMatch(/^\.?mailmap$/);
    const saved = join(await mkdtemp(join(tmpdir(), 'mailmap-')), '.mailmap');
    cleanup.push(join(saved, '..'));
    await file.saveAs(saved);
    expect(await readFile(saved, 'utf8')).toContain('Person Three <three@new.example> <p3@old.example>\n');
    await context.close();
    await until(complete, 90_000);
  }, 120_000);
});
