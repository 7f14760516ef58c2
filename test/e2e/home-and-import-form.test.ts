import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getImport } from '#data/imports/items';
import { cutOver, followOrigin } from '#data/imports/sync';
import { getRepository, createRepository as storeRepository } from '#data/repositories';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { config, ENV } from '#shared/config';
import { createUser } from '#test/fixtures';
import { IMPORT_PREVIEW } from '#test/import-api';
import { advance, createRepository, seedImport } from '#test/import-seed';
import { type RefusingStepFunctions, refusingStepFunctions } from '#test/refusing-step-functions';
import { basicAuth, json, startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/*
 * Where a person starts (issue 37) over HTTP: the home page signed out and signed in, the web
 * origin's HTML error pages beside the API's JSON ones, and the import form (`/new/import`): its
 * refusals shown again with the values, the live name check, the signed-out round trip through
 * the login page, a start that fails after the repository was made, and an import that completes.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let stepFunctions: RefusingStepFunctions;
let origin: OriginServer;
let root: string;

const OWNER = 'hubber';
const PASSWORD = 'hubber-pass-12';
const OTHER = 'stranger';

async function signedIn(login: string, password: string): Promise<WebClient> {
  const web = new WebClient(stack.webUrl);
  await web.get('/login');
  const response = await web.post('/login', { login, password });
  expect(response.status).toBe(303);
  return web;
}

async function untilImport(repo: string, done: (status: string) => boolean): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await fetch(`${stack.baseUrl}/repos/${OWNER}/${repo}/import`, {
      headers: { Authorization: basicAuth(OWNER, PASSWORD), Accept: IMPORT_PREVIEW },
    });
    const { status } = await json(response);
    if (done(status)) return status;
    if (Date.now() > deadline) throw new Error(`import of ${repo} still ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  stack = await startTestStack();
  stepFunctions = await refusingStepFunctions(stack.stepFunctionsEndpoint);
  process.env[ENV.stepFunctionsEndpoint] = stepFunctions.endpoint;
  root = await mkdtemp(join(tmpdir(), 'import-form-origins-'));
  await makeFixtureRepository(join(root, 'small.git'), { commits: 3 });
  origin = await serveGitHttp(root);
  await createUser(stack.endpointsFile, OWNER, PASSWORD);
  await createUser(stack.endpointsFile, OTHER, 'stranger-pass-12');
}, 60_000);

afterAll(async () => {
  await origin?.close();
  await stepFunctions?.stop();
  await stack?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('the home page', () => {
  it('offers sign in and sign up when signed out', async () => {
    const response = await fetch(`${stack.webUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page).toContain('href="/login?return_to=%2F"');
    expect(page).toContain('href="/signup?return_to=%2F"');
  });

  it('says there are no repositories yet, and links to the import form', async () => {
    const web = await signedIn(OTHER, 'stranger-pass-12');
    const response = await web.get('/');
    expect(response.status).toBe(200);
    expect(web.lastHtml).toContain('You have no repositories yet');
    expect(web.lastHtml).toContain('href="/new/import">Import a repository</a>');
  });

  it("lists the person's repositories with each import's status, percent and following state", async () => {
    for (const name of ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'plain'])
      await createRepository(stack.baseUrl, OWNER, PASSWORD, name);
    await seedImport(OWNER, 'alpha', { percent: 35 });
    for (const name of ['bravo', 'charlie', 'delta']) {
      await seedImport(OWNER, name);
      await advance(OWNER, name, { status: 'complete' });
    }
    await seedImport(OWNER, 'echo');
    await advance(OWNER, 'echo', { status: 'error', errorMessage: 'the origin went away' });
    for (const name of ['charlie', 'delta']) {
      const record = await getImport(OWNER, name);
      expect(await followOrigin(OWNER, name, record?.importId ?? 0, 60, 3, undefined)).toBe('ok');
    }
    const delta = await getImport(OWNER, 'delta');
    expect(await cutOver(OWNER, 'delta', delta?.importId ?? 0, delta?.attempt ?? 0)).toBe('ok');

    const web = await signedIn(OWNER, PASSWORD);
    expect((await web.get('/')).status).toBe(200);
    const rows = [
      ...web.lastHtml.matchAll(
        /<li data-status="([a-z_]+)" data-following="([a-z_]+)">\s*<span><a class="repo-name" href="([^"]+)">([^<]+)<\/a>/g,
      ),
    ].map((match) => match.slice(1, 5));
    expect(rows).toEqual([
      ['importing', 'off', `/${OWNER}/alpha/import`, `${OWNER}/alpha`],
      ['complete', 'off', `/${OWNER}/bravo/import`, `${OWNER}/bravo`],
      ['complete', 'following', `/${OWNER}/charlie/import`, `${OWNER}/charlie`],
      ['complete', 'cut_over', `/${OWNER}/delta/import`, `${OWNER}/delta`],
      ['error', 'off', `/${OWNER}/echo/import`, `${OWNER}/echo`],
    ]);
    expect(web.lastHtml).toContain('aria-label="hubber/alpha: 35%"');
    expect(web.lastHtml).toContain('Following its origin');
    expect(web.lastHtml).toContain('Cut over');
    expect(web.lastHtml).toContain('Import failed');
    expect(web.lastHtml).toMatch(
      /<span class="repo-name">hubber\/plain<\/span><span class="muted">No import<\/span>/,
    );
  });
});

describe('the home page with 200 repositories', () => {
  it('shows them 100 at a time, in name order, with a link to the next ones', async () => {
    await createUser(stack.endpointsFile, 'many-repos', 'many-repos-pass-1');
    const names = Array.from({ length: 200 }, (_, index) => `project-${String(index).padStart(3, '0')}`);
    for (let i = 0; i < names.length; i += 20)
      await Promise.all(
        names.slice(i, i + 20).map((name) => storeRepository({ ownerLogin: 'many-repos', name })),
      );
    const web = await signedIn('many-repos', 'many-repos-pass-1');
    const shown = () =>
      [...web.lastHtml.matchAll(/<span class="repo-name">many-repos\/([^<]+)</g)].map((m) => m[1]);
    expect((await web.get('/')).status).toBe(200);
    expect(shown()).toEqual(names.slice(0, 100));
    const next = /href="(\/\?after=[^"]+)" rel="next"/.exec(web.lastHtml)?.[1];
    expect(next).toBe('/?after=project-099');
    expect((await web.get(next ?? '')).status).toBe(200);
    expect(shown()).toEqual(names.slice(100));
    expect(web.lastHtml).not.toContain('rel="next"');
  });
});

describe('error pages', () => {
  it.each(['/no/such/page/here', '/nobody-at-all', '/settings/nothing', '/new'])(
    'GET %s is the HTML 404 page in the layout',
    async (path) => {
      const response = await fetch(`${stack.webUrl}${path}`);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const page = await response.text();
      expect(page).toContain('<h1 id="error-heading">Page not found</h1>');
      expect(page).toContain('<header><a class="brand" href="/">');
    },
  );

  it('signed in, the 404 page leads back to the repositories', async () => {
    const web = await signedIn(OWNER, PASSWORD);
    expect((await web.get('/no/such/page')).status).toBe(404);
    expect(web.lastHtml).toContain('href="/">Your repositories</a>');
    expect(web.lastHtml).toContain(`Sign out ${OWNER}`);
  });

  it.each([
    ['GET', '/api/v3/no/such/route'],
    ['GET', '/api/v3'.concat('/users/x/y/z')],
    ['GET', '/.well-known/nothing-here'],
    ['POST', '/no/such/form'],
  ])('%s %s keeps the JSON 404', async (method, path) => {
    const response = await fetch(`${stack.webUrl}${path}`, { method });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await json(response)).message).toBe('Not Found');
  });

  it("someone else's import page is the same 404 page as no import at all", async () => {
    const web = await signedIn(OTHER, 'stranger-pass-12');
    const response = await web.get(`/${OWNER}/alpha/import`);
    expect(response.status).toBe(404);
    expect(web.lastHtml).toContain(`There is no import for ${OWNER}/alpha that you can see`);
  });

  it('a form sent without its token is the HTML 403 page', async () => {
    const web = await signedIn(OWNER, PASSWORD);
    const response = await web.post('/new/import', { name: 'x' }, { csrf: 'not-the-token' });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(web.lastHtml).toContain('<h1 id="error-heading">Not allowed</h1>');
    expect(web.lastHtml).toContain('This form has expired or did not come from this site.');
  });
});

describe('the import form', () => {
  it('sends a signed-out visitor to sign in and back to the form', async () => {
    const web = new WebClient(stack.webUrl);
    const response = await web.get('/new/import');
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/login?return_to=%2Fnew%2Fimport');
    await web.get(response.headers.get('location') ?? '');
    const signIn = await web.post('/login', { login: OWNER, password: PASSWORD, return_to: '/new/import' });
    expect(signIn.headers.get('location')).toBe('/new/import');
    expect((await web.get('/new/import')).status).toBe(200);
    expect(web.lastHtml).toContain('<h1>Import your project</h1>');
    // A signed-out POST goes the same way, and the live check answers nothing to strangers.
    const stranger = new WebClient(stack.webUrl);
    await stranger.get('/new/import');
    expect((await stranger.post('/new/import', { name: 'x' }, { csrf: null })).status).toBe(403);
    expect((await stranger.get('/new/import/name?name=alpha')).status).toBe(302);
  });

  it('checks a name live: taken, invalid, free', async () => {
    const web = await signedIn(OWNER, PASSWORD);
    const check = async (name: string) => {
      const response = await web.get(`/new/import/name?name=${encodeURIComponent(name)}`);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      return json(response);
    };
    await expect(check('Alpha')).resolves.toEqual({
      available: false,
      message: 'You already have a repository named Alpha.',
    });
    await expect(check('two words')).resolves.toMatchObject({
      available: false,
      message: expect.stringMatching(/letters, digits/),
    });
    await expect(check('fresh-name')).resolves.toEqual({
      available: true,
      message: 'fresh-name is available.',
    });
  });

  it.each([
    [
      'a taken name',
      { vcs_url: 'ORIGIN/small.git', name: 'alpha' },
      'name',
      'You already have a repository named alpha.',
    ],
    [
      'an invalid name',
      { vcs_url: 'ORIGIN/small.git', name: 'no spaces.git' },
      'name',
      'A name may have letters',
    ],
    [
      'a URL the origin check refuses',
      { vcs_url: 'http://10.1.2.3/secret.git', name: 'fresh' },
      'vcs_url',
      '',
    ],
    [
      'a username without its password',
      { vcs_url: 'ORIGIN/small.git', vcs_username: 'mona', name: 'fresh' },
      'vcs_password',
      'Enter the password for this username.',
    ],
  ])(
    'shows the form again with %s: 422, the values kept, the message beside the field',
    async (_, fields, field, message) => {
      const web = await signedIn(OWNER, PASSWORD);
      await web.get('/new/import');
      const sent: Record<string, string> = {
        ...fields,
        vcs_url: fields.vcs_url.replace('ORIGIN', origin.url),
        visibility: 'private',
      };
      const response = await web.post('/new/import', sent);
      expect(response.status).toBe(422);
      expect(web.lastHtml).toMatch(
        new RegExp(`id="${field}-status" class="field-error"[^>]*>${message.replace(/[.*+?()]/g, '\\$&')}`),
      );
      expect(web.lastHtml).toContain(`value="${sent.vcs_url}"`);
      expect(web.lastHtml).toContain(`value="${sent.name}"`);
      expect(web.lastHtml).toContain('value="private" checked');
      if (sent.vcs_username) expect(web.lastHtml).toContain(`value="${sent.vcs_username}"`);
      expect(await getRepository(OWNER, 'fresh')).toBeUndefined();
    },
  );

  it('never shows the password again', async () => {
    const web = await signedIn(OWNER, PASSWORD);
    await web.get('/new/import');
    const response = await web.post('/new/import', {
      vcs_url: `${origin.url}/small.git`,
      vcs_username: 'mona',
      vcs_password: 'hunter2-secret',
      name: 'bad name',
    });
    expect(response.status).toBe(422);
    expect(web.lastHtml).not.toContain('hunter2-secret');
  });

  it('removes the new repository when the import cannot start, so that sending the form again works', async () => {
    const web = await signedIn(OWNER, PASSWORD);
    await web.get('/new/import');
    stepFunctions.refuse = /.*/;
    const refused = await web.post('/new/import', { vcs_url: `${origin.url}/small.git`, name: 'second-try' });
    stepFunctions.refuse = undefined;
    expect(refused.status).toBe(503);
    expect(web.lastHtml).toContain('The import service is unavailable; try again later');
    expect(web.lastHtml).toContain('value="second-try"');
    expect(await getRepository(OWNER, 'second-try')).toBeUndefined();

    const again = await web.post('/new/import', { vcs_url: `${origin.url}/small.git`, name: 'second-try' });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(`/${OWNER}/second-try/import`);
    await expect(
      untilImport('second-try', (status) => status === 'complete' || status === 'error'),
    ).resolves.toBe('complete');
  });

  it('makes the repository, starts the import and goes to its progress page', async () => {
    const web = await signedIn(OWNER, PASSWORD);
    await web.get('/new/import');
    const response = await web.post('/new/import', {
      vcs_url: `${origin.url}/small.git`,
      name: 'Moved-Here',
      visibility: 'private',
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/${OWNER}/Moved-Here/import`);
    expect(await getRepository(OWNER, 'Moved-Here')).toMatchObject({ name: 'Moved-Here', private: true });
    await expect(
      untilImport('Moved-Here', (status) => status === 'complete' || status === 'error'),
    ).resolves.toBe('complete');
    expect((await web.get(`/${OWNER}/Moved-Here/import`)).status).toBe(200);
  });
});

describe('the 500 page', () => {
  // Last in the file: it breaks the file's table.
  it('is an HTML page in the layout when the table is gone', async () => {
    const web = await signedIn(OWNER, PASSWORD);
    const client = new DynamoDBClient({
      endpoint: config().dynamodbEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await client.send(new DeleteTableCommand({ TableName: config().tableName }));
    client.destroy();
    const response = await web.get('/');
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(web.lastHtml).toContain('<h1 id="error-heading">Something went wrong</h1>');
    // Nothing of the error reaches the page (the style sheet aside, whose class names may say anything).
    const shown = web.lastHtml.replace(/<style>[\s\S]*?<\/style>/, '');
    expect(shown).not.toMatch(/ResourceNotFound|stack|at .*\.ts/);
  });
});
