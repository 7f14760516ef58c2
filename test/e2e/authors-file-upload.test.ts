import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { MAX_REQUEST_BODY_BYTES } from '#shared/body-limit';
import { launchBrowser, screenshot } from '#test/browser';
import { createUser, personalToken } from '#test/fixtures';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/*
 * The authors file chosen as a file on the pages (issue 37, item 4), in Chromium without scripts
 * needed: the progress page of one Git import and the dashboard of a batch of two, each sent a real
 * file with setInputFiles; the mapping asserted through the API. The multipart body travels as the
 * deployed API passes it (base64, its media type being binary): a Latin-1 file is refused by name
 * instead of mapped with U+FFFD, a UTF-8 file with a BOM and CRLF maps its accents exactly. Bodies
 * that are malformed, too large or without the CSRF token get an HTML error page, never a 500.
 */

const OWNER = 'uploader';
const PASSWORD = 'uploader-pass-1';
const REPO = 'people';
const BATCH = ['batch-one', 'batch-two'] as const;

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let origin: OriginServer;
let root: string;
let token: string;
let batchId: number;
let browser: Browser | undefined;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

/** Three commits by `Person N <pN@old.example>`. */
async function makeOrigin(dir: string): Promise<void> {
  const env = { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' };
  await promisify(execFile)('git', ['init', '-q', '--bare', '-b', 'main', dir], { env });
  const stream = [0, 1, 2]
    .map((n) => {
      const who = `Person ${n} <p${n}@old.example> ${1_600_000_000 + n * 60} +0000`;
      const message = `change ${n}\n`;
      const content = `line ${n}\n`;
      return `commit refs/heads/main\nauthor ${who}\ncommitter ${who}\ndata ${message.length}\n${message}M 644 inline f.txt\ndata ${content.length}\n${content}\n`;
    })
    .join('');
  await new Promise<void>((resolve, reject) => {
    const child = execFile('git', ['fast-import', '--quiet'], { cwd: dir, env }, (error) =>
      error ? reject(error) : resolve(),
    );
    child.stdin?.end(stream);
  });
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  let last = await read();
  for (const deadline = Date.now() + timeoutMs; !done(last) && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    last = await read();
  }
  if (!done(last)) throw new Error(`did not get there: ${JSON.stringify(last)}`);
  return last;
}

/** `remote_name → name <email>` of an import's authors, from the API. */
async function authorsOf(repo: string): Promise<Record<string, string>> {
  const listed = await api('GET', `/repos/${OWNER}/${repo}/import/authors`);
  expect(listed.status).toBe(200);
  return Object.fromEntries(
    (listed.body as { remote_name: string; name: string; email: string }[]).map((author) => [
      author.remote_name,
      `${author.name} <${author.email}>`,
    ]),
  );
}

/** A real file on disk for the file chooser. */
async function fileOnDisk(name: string, bytes: Buffer): Promise<string> {
  const path = join(root, 'chosen', name);
  await mkdir(join(root, 'chosen'), { recursive: true });
  await writeFile(path, bytes);
  return path;
}

async function signIn(page: Page, path: string): Promise<void> {
  await page.goto(`${stack.webUrl}${path}`);
  await page.getByLabel('Username', { exact: true }).fill(OWNER);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === path);
}

beforeAll(async () => {
  stack = await startTestStack();
  root = await mkdtemp(join(tmpdir(), 'authors-upload-'));
  await makeOrigin(join(root, 'people.git'));
  await makeOrigin(join(root, 'folks.git'));
  origin = await serveGitHttp(root);
  const user = await createUser(stack.endpointsFile, OWNER, PASSWORD);
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
  expect((await api('POST', '/user/repos', { name: REPO })).status).toBe(201);
  expect(
    (await api('PUT', `/repos/${OWNER}/${REPO}/import`, { vcs_url: `${origin.url}/people.git`, vcs: 'git' }))
      .status,
  ).toBe(201);
  const created = await api('POST', '/user/import-batches', {
    imports: [
      { vcs_url: `${origin.url}/people.git`, vcs: 'git', repository: BATCH[0] },
      { vcs_url: `${origin.url}/folks.git`, vcs: 'git', repository: BATCH[1] },
    ],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  batchId = created.body.id;
  await until(
    () => api('GET', `/repos/${OWNER}/${REPO}/import`),
    (answer) => answer.body.status === 'complete',
  );
  await until(
    () => api('GET', `/user/import-batches/${batchId}`),
    (answer) => answer.body.imports.every((entry: { status: string }) => entry.status === 'complete'),
  );
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await origin?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('the progress page’s authors file, chosen as a file in Chromium', () => {
  it('refuses a Latin-1 file by name, maps a UTF-8 file with BOM and CRLF exactly, refuses a file and a paste together, takes the paste alone', async () => {
    browser = await launchBrowser();
    const page = await (await browser.newContext()).newPage();
    await signIn(page, `/${OWNER}/${REPO}/import`);

    const latin1 = await fileOnDisk(
      'latin1.txt',
      Buffer.from('Person 0 = Zoë Ångström <zoe@new.example>\n', 'latin1'),
    );
    await page.getByLabel('File', { exact: true }).setInputFiles(latin1);
    await page.getByRole('button', { name: 'Map authors from the file' }).click();
    await page.getByText('The file “latin1.txt” is not UTF-8 text.').waitFor();
    expect((await authorsOf(REPO))['Person 0']).toBe('Person 0 <p0@old.example>');

    const utf8 = await fileOnDisk(
      'authors.txt',
      Buffer.from(
        '\uFEFF# from Windows\r\nPerson 0 = Zoë Ångström <zoe@new.example>\r\nPerson 2 = Ada <ada@new.example>\r\n',
      ),
    );
    await page.getByLabel('File', { exact: true }).setInputFiles(utf8);
    await page.getByRole('button', { name: 'Map authors from the file' }).click();
    await page.getByRole('heading', { name: 'Mapped (2)' }).waitFor();
    await screenshot(page, 'authors-file-upload-answer');
    expect(await authorsOf(REPO)).toMatchObject({
      'Person 0': 'Zoë Ångström <zoe@new.example>',
      'Person 1': 'Person 1 <p1@old.example>',
      'Person 2': 'Ada <ada@new.example>',
    });

    await page.getByRole('link', { name: 'Back to the import' }).click();
    await page.getByLabel('File', { exact: true }).setInputFiles(utf8);
    await page.getByLabel('Or paste its content').fill('Person 1 = Bea <bea@new.example>\n');
    await page.getByRole('button', { name: 'Map authors from the file' }).click();
    await page.getByText('Choose a file or paste its content, not both').waitFor();
    expect((await authorsOf(REPO))['Person 1']).toBe('Person 1 <p1@old.example>');

    // The paste box alone, in the same multipart form (the empty file input sends an empty part).
    await page.getByLabel('File', { exact: true }).setInputFiles([]);
    await page.getByLabel('Or paste its content').fill('Person 1 = Bea <bea@new.example>\n');
    await page.getByRole('button', { name: 'Map authors from the file' }).click();
    await page.getByRole('heading', { name: 'Mapped (1)' }).waitFor();
    expect((await authorsOf(REPO))['Person 1']).toBe('Bea <bea@new.example>');
  }, 120_000);
});

describe('a file over the request bound, chosen in Chromium', () => {
  it('gets the HTML 413 page from the edge, before any function', async () => {
    browser ??= await launchBrowser();
    const page = await (await browser.newContext()).newPage();
    await signIn(page, `/${OWNER}/${REPO}/import`);
    const big = await fileOnDisk('big.txt', Buffer.alloc(MAX_REQUEST_BODY_BYTES + 1, 'a'));
    await page.getByLabel('File', { exact: true }).setInputFiles(big);
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.getByRole('button', { name: 'Map authors from the file' }).click(),
    ]);
    expect(answer.status()).toBe(413);
    await page.getByRole('heading', { name: 'Too much data' }).waitFor();
    expect(await page.locator('#error-message').textContent()).toContain('the most a page takes');
  }, 60_000);
});

describe('the batch dashboard’s authors file, chosen as a file in Chromium', () => {
  it('maps the authors of every import of the batch', async () => {
    browser ??= await launchBrowser();
    const page = await (await browser.newContext()).newPage();
    await signIn(page, `/imports/batches/${batchId}`);
    const csv = await fileOnDisk(
      'authors.csv',
      Buffer.from('origin,name,email\r\np1@old.example,"Bea, Mapped",bea@new.example\r\n'),
    );
    await page.getByLabel('File', { exact: true }).setInputFiles(csv);
    await page.getByRole('button', { name: 'Map authors in all imports' }).click();
    await page.getByText('Applied to 2 imports').waitFor();
    for (const repo of BATCH)
      expect((await authorsOf(repo))['Person 1']).toBe('Bea, Mapped <bea@new.example>');
  }, 120_000);
});

describe('POST of a multipart body to a page that cannot take it', () => {
  const path = () => `/${OWNER}/${REPO}/import/authors`;

  async function signedIn(): Promise<WebClient> {
    const client = new WebClient(stack.webUrl);
    await client.get('/login');
    expect((await client.post('/login', { login: OWNER, password: PASSWORD })).status).toBe(303);
    expect((await client.get(`/${OWNER}/${REPO}/import`)).status).toBe(200);
    return client;
  }

  const expectErrorPage = (client: WebClient, response: Response, status: number, words: string) => {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(client.lastHtml).toContain('<!doctype html>');
    expect(client.lastHtml).toContain(`Error ${status}`);
    expect(client.lastHtml).toContain(words);
  };

  it('answers a malformed body with the 400 page, and a form without the CSRF token with the 403 page', async () => {
    const client = await signedIn();
    const before = await authorsOf(REPO);
    const malformed = await client.postBody(path(), Buffer.from('--x\r\nno headers, no end'), {
      'Content-Type': 'multipart/form-data; boundary=x',
    });
    expectErrorPage(client, malformed, 400, 'its multipart/form-data body is malformed');

    const form = new FormData();
    form.append('file', new Blob(['Person 1 = Eve <eve@new.example>\n']), 'authors.txt');
    expectErrorPage(client, await client.postBody(path(), form), 403, 'This form has expired');
    expect(await authorsOf(REPO)).toEqual(before);
  });

  it('answers a body over the bound, sent without Content-Length, with the 413 page', async () => {
    const client = await signedIn();
    const csrf = client.csrf();
    const head = `--x\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n--x\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n\r\n`;
    const parts = [
      Buffer.from(head),
      Buffer.alloc(MAX_REQUEST_BODY_BYTES, 'a'),
      Buffer.from('\r\n--x--\r\n'),
    ];
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    });
    const response = await client.postBody(path(), chunked, {
      'Content-Type': 'multipart/form-data; boundary=x',
    });
    expectErrorPage(client, response, 413, 'the most a page takes');
  });
});
