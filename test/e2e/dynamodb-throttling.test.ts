import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startThrottlingProxy, type ThrottlingProxy } from '#local/dynamodb-throttling';
import { createApp, createUser, personalToken, signedUpUser } from '#test/fixtures';
import { ORIGIN_KINDS, serveFourOrigins } from '#test/four-origins';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { basicAuth, json, startTestStack } from '#test/stack';

/**
 * DynamoDB throttling everywhere: the local stack's DynamoDB endpoint is the throttling stand-in
 * (`lib/local/dynamodb-throttling.ts`) in front of DynamoDB Local, refusing a share of all requests
 * with DynamoDB's own throttling answers (transactions cancelled with `ThrottlingError`). Imports
 * of every origin kind end as unthrottled ones do; routes answer as usual; a route that cannot get
 * through answers GitHub's 503 and writes nothing.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let proxy: ThrottlingProxy;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let user: Awaited<ReturnType<typeof createUser>>;
let origins: Awaited<ReturnType<typeof serveFourOrigins>>;
const SHARE = 0.3;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

async function newRepo(name: string): Promise<void> {
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
}

async function until(repo: string, wanted: string, timeoutMs = 240_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    const response = await api('GET', `/repos/octocat/${repo}/import`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    last = response.body;
    if (last.status === wanted) return last;
    if (last.status === 'error') break;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error(`import of ${repo} did not reach ${wanted}: ${JSON.stringify(last)}`);
}

/** What the client sees of a finished import, without what names the repository. */
async function outcome(repo: string) {
  const done = await until(repo, 'complete');
  const authors = await api('GET', `/repos/octocat/${repo}/import/authors`);
  expect(authors.status).toBe(200);
  const { url, html_url, repository_url, authors_url, ...fields } = done;
  return {
    fields,
    authors: (authors.body as Array<Record<string, unknown>>).map(
      // Ids and URLs name this import's authors; the rest is what the history says.
      ({ url: _, id: __, import_url: ___, ...author }) => author,
    ),
    refs: await remoteRefs(git, `${stack.webUrl}/octocat/${repo}.git`),
  };
}

async function importAll(suffix: string) {
  await Promise.all(
    ORIGIN_KINDS.map(async (kind) => {
      await newRepo(`${kind}-${suffix}`);
      const started = await api('PUT', `/repos/octocat/${kind}-${suffix}/import`, origins.importBody(kind));
      expect(started.status, JSON.stringify(started.body)).toBe(201);
    }),
  );
  return Object.fromEntries(
    await Promise.all(ORIGIN_KINDS.map(async (kind) => [kind, await outcome(`${kind}-${suffix}`)])),
  );
}

let app: Awaited<ReturnType<typeof createApp>>;

/** A code of the test's application, approved on the consent page by a new user. */
async function oauthCode(login: string): Promise<string> {
  const person = await signedUpUser(stack.webUrl, login, 'long-enough-pass-1');
  const page = await person.browser.get(
    `/login/oauth/authorize?${new URLSearchParams({ client_id: app.clientId, scope: 'gist' })}`,
  );
  expect(page.status).toBe(200);
  const hidden = Object.fromEntries(
    [...person.browser.lastHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
      .filter((m) => m[1] !== '_csrf')
      .map((m) => [m[1] ?? '', (m[2] ?? '').replace(/&amp;/g, '&')]),
  );
  const decided = await person.browser.post('/login/oauth/authorize', {
    ...hidden,
    granted_scope: ['gist'],
    decision: 'authorize',
  });
  expect(decided.status).toBe(303);
  return new URL(decided.headers.get('location') ?? '').searchParams.get('code') ?? '';
}

const exchange = (code: string) =>
  fetch(`${stack.webUrl}/login/oauth/access_token`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, code }),
  });

beforeAll(async () => {
  proxy = await startThrottlingProxy({ target: inject('dynamodbEndpoint') });
  stack = await startTestStack({ dynamodbEndpoint: proxy.endpoint });
  git = await gitClient();
  origins = await serveFourOrigins();
  user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
  app = await createApp(stack.endpointsFile, 'octocat', 'Throttled App');
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await proxy?.stop();
  await origins?.close();
});

describe('DynamoDB throttling', () => {
  it(`imports every origin kind with ${SHARE * 100}% of DynamoDB requests throttled exactly as without`, async () => {
    proxy.share = 0;
    const calm = await importAll('calm');
    proxy.share = SHARE;
    const throttled = await importAll('throttled');
    proxy.share = 0;
    expect(throttled).toEqual(calm);
    // Refusals reached reads, writes, queries and transactions alike.
    expect([...proxy.throttled.keys()]).toEqual(
      expect.arrayContaining(['GetItem', 'UpdateItem', 'Query', 'TransactWriteItems']),
    );
  }, 900_000);

  it(`answers the API's routes as usual with ${SHARE * 100}% of DynamoDB requests throttled`, async () => {
    proxy.share = SHARE;
    try {
      for (let round = 0; round < 5; round++) {
        // Authorizations: create and list.
        const created = await fetch(`${stack.baseUrl}/authorizations`, {
          method: 'POST',
          headers: { Authorization: user.auth },
          body: JSON.stringify({ scopes: ['repo'], note: `round ${round}` }),
        });
        expect(created.status, await created.clone().text()).toBe(201);
        const listed = await fetch(`${stack.baseUrl}/authorizations`, {
          headers: { Authorization: user.auth },
        });
        expect(listed.status).toBe(200);
        expect((await json(listed)).map((a: { note: string }) => a.note)).toContain(`round ${round}`);
      }
      // The OAuth web flow's code exchange.
      const exchanged = await exchange(await oauthCode('throttled-person'));
      expect(exchanged.status).toBe(200);
      expect((await json(exchanged)).access_token).toMatch(/^gho_/);
      // An import: PUT, GET until complete, PATCH an author.
      await newRepo('routes-throttled');
      const started = await api('PUT', '/repos/octocat/routes-throttled/import', origins.importBody('git'));
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      await until('routes-throttled', 'complete');
      const authors = await api('GET', '/repos/octocat/routes-throttled/import/authors');
      expect(authors.status).toBe(200);
      const first = authors.body[0] as { id: number };
      const patched = await api('PATCH', `/repos/octocat/routes-throttled/import/authors/${first.id}`, {
        email: 'mapped@example.org',
        name: 'Mapped Person',
      });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body).toMatchObject({ email: 'mapped@example.org', name: 'Mapped Person' });
    } finally {
      proxy.share = 0;
    }
  }, 600_000);

  it('answers 503 in GitHub’s format within the function’s time, and writes nothing, when DynamoDB throttles every request', async () => {
    await newRepo('never-imported');
    const code = await oauthCode('unlucky-person');
    proxy.share = 1;
    let started: number;
    try {
      started = Date.now();
      const created = await fetch(`${stack.baseUrl}/authorizations`, {
        method: 'POST',
        headers: { Authorization: basicAuth(user.login, user.password) },
        body: JSON.stringify({ scopes: ['repo'], note: 'never written' }),
      });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(created.status).toBe(503);
      expect(await json(created)).toEqual({
        message: 'Service Unavailable',
        documentation_url: expect.stringMatching(/^https:\/\//),
      });
      started = Date.now();
      const put = await api('PUT', '/repos/octocat/never-imported/import', origins.importBody('git'));
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(put.status).toBe(503);
      expect(put.body.message).toBe('Service Unavailable');
      const refused = await exchange(code);
      expect(refused.status).toBe(503);
      expect(await json(refused)).toMatchObject({ error: 'temporarily_unavailable' });
    } finally {
      proxy.share = 0;
    }
    const listed = await fetch(`${stack.baseUrl}/authorizations`, { headers: { Authorization: user.auth } });
    expect((await json(listed)).map((a: { note: string }) => a.note)).not.toContain('never written');
    expect((await api('GET', '/repos/octocat/never-imported/import')).status).toBe(404);
    // The refused exchange spent nothing: the code still buys its token once.
    const exchanged = await exchange(code);
    expect(exchanged.status).toBe(200);
    expect((await json(exchanged)).access_token).toMatch(/^gho_/);
  }, 120_000);
});
