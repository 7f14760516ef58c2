import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { basicAuth, json, startTestStack } from '#test/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
const PASSWORD = 'correct-horse-7';

const api = (path: string, init: RequestInit = {}) => fetch(`${stack.baseUrl}${path}`, init);
const asOctocat = { Authorization: basicAuth('octocat', PASSWORD) };

beforeAll(async () => {
  stack = await startTestStack();
  const created = await admin(
    stack.endpointsFile,
    'user',
    'create',
    'octocat',
    '--password',
    PASSWORD,
    '--email',
    'octocat@example.com',
    '--name',
    'The Octocat',
  );
  expect(created.code, created.stderr).toBe(0);
  expect((await admin(stack.endpointsFile, 'user', 'create', 'hubot', '--password', PASSWORD)).code).toBe(0);
});

afterAll(async () => {
  await stack?.stop();
});

describe('users over HTTP', () => {
  it('GET /users/:login returns the public profile in GitHub shape', async () => {
    const response = await api('/users/OctoCat');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-github-media-type')).toBe('github.v3; format=json');
    const user = await json(response);
    expect(user).toMatchObject({
      login: 'octocat',
      type: 'User',
      site_admin: false,
      name: 'The Octocat',
      // The sign-up address is private unless the user chose to show it (test/e2e/public-email.test.ts).
      email: null,
      url: `${stack.baseUrl}/users/octocat`,
      html_url: `${stack.webUrl}/octocat`,
      repos_url: `${stack.baseUrl}/users/octocat/repos`,
      following_url: `${stack.baseUrl}/users/octocat/following{/other_user}`,
      gravatar_id: '',
    });
    expect(Number.isInteger(user.id)).toBe(true);
    expect(user.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('GET /users/:login is 404 for an unknown login', async () => {
    const response = await api('/users/nobody-here');
    expect(response.status).toBe(404);
    expect(await json(response)).toEqual({ message: 'Not Found', documentation_url: expect.any(String) });
  });

  it('GET /user with the right password returns the user', async () => {
    const response = await api('/user', { headers: asOctocat });
    expect(response.status).toBe(200);
    expect((await json(response)).login).toBe('octocat');
  });

  it('GET /user without credentials is 401 Requires authentication', async () => {
    const response = await api('/user');
    expect(response.status).toBe(401);
    expect(await json(response)).toEqual({
      message: 'Requires authentication',
      documentation_url: expect.any(String),
    });
  });

  it.each([
    ['a wrong password', basicAuth('octocat', 'wrong-password-1')],
    ['an unknown login', basicAuth('nobody-here', PASSWORD)],
    ['a malformed header', 'Basic !!!'],
    ['an unknown token', 'token 0123456789abcdef'],
  ])('GET /user with %s is 401 Bad credentials', async (_what, authorization) => {
    const response = await api('/user', { headers: { Authorization: authorization } });
    expect(response.status).toBe(401);
    expect(await json(response)).toEqual({
      message: 'Bad credentials',
      documentation_url: expect.any(String),
    });
  });

  it('checks credentials even on anonymous routes', async () => {
    const response = await api('/users/octocat', {
      headers: { Authorization: basicAuth('octocat', 'nope-nope-1') },
    });
    expect(response.status).toBe(401);
  });
});

describe('repositories over HTTP', () => {
  const create = (body: string, headers: Record<string, string> = asOctocat) =>
    api('/user/repos', { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body });

  it('POST /user/repos creates a repository with Location', async () => {
    const response = await create(JSON.stringify({ name: 'Hello-World', description: 'My first repo' }));
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`${stack.baseUrl}/repos/octocat/Hello-World`);
    const repo = await json(response);
    expect(repo).toMatchObject({
      name: 'Hello-World',
      full_name: 'octocat/Hello-World',
      private: false,
      description: 'My first repo',
    });
    expect(repo.owner.login).toBe('octocat');

    const fetched = await api('/repos/octocat/hello-world');
    expect(fetched.status).toBe(200);
    expect((await json(fetched)).id).toBe(repo.id);
  });

  it('reads JSON whatever the Content-Type, as GitHub does', async () => {
    const response = await api('/user/repos', {
      method: 'POST',
      headers: { ...asOctocat, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: JSON.stringify({ name: 'form-typed' }),
    });
    expect(response.status).toBe(201);
  });

  it('a duplicate name is 422 and writes nothing new', async () => {
    expect((await create(JSON.stringify({ name: 'dupe' }))).status).toBe(201);
    const again = await create(JSON.stringify({ name: 'DUPE' }));
    expect(again.status).toBe(422);
    expect(await json(again)).toMatchObject({
      message: 'Validation Failed',
      errors: [
        {
          resource: 'Repository',
          field: 'name',
          code: 'custom',
          message: 'name already exists on this account',
        },
      ],
    });
  });

  it('a private repository is 404 to everyone but its owner', async () => {
    expect((await create(JSON.stringify({ name: 'secret', private: true }))).status).toBe(201);
    expect((await api('/repos/octocat/secret')).status).toBe(404);
    expect(
      (await api('/repos/octocat/secret', { headers: { Authorization: basicAuth('hubot', PASSWORD) } }))
        .status,
    ).toBe(404);
    expect((await api('/repos/octocat/secret', { headers: asOctocat })).status).toBe(200);
  });

  it('invalid JSON is 400 Problems parsing JSON', async () => {
    const response = await create('{"name": ');
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({
      message: 'Problems parsing JSON',
      documentation_url: expect.any(String),
    });
  });

  it.each(['[1,2]', '"text"', '42', 'null'])(
    'a JSON non-object (%s) is 400 Body should be a JSON object',
    async (body) => {
      const response = await create(body);
      expect(response.status).toBe(400);
      expect((await json(response)).message).toBe('Body should be a JSON object');
    },
  );

  it('invalid fields are 422 Validation Failed with errors[]', async () => {
    const response = await create(JSON.stringify({ private: 'yes' }));
    expect(response.status).toBe(422);
    expect(await json(response)).toEqual({
      message: 'Validation Failed',
      errors: [
        { resource: 'Repository', field: 'name', code: 'missing_field' },
        { resource: 'Repository', field: 'private', code: 'invalid' },
      ],
      documentation_url: expect.any(String),
    });
    const badName = await create(JSON.stringify({ name: 'has space' }));
    expect(badName.status).toBe(422);
    expect((await json(badName)).errors[0]).toMatchObject({ field: 'name', code: 'custom' });
  });

  it('an oversized body is 413 and nothing is created', async () => {
    const response = await create(JSON.stringify({ name: 'big', description: 'x'.repeat(2 * 1024 * 1024) }));
    expect(response.status).toBe(413);
    expect((await api('/repos/octocat/big', { headers: asOctocat })).status).toBe(404);
  });

  it('creating needs authentication', async () => {
    const response = await api('/user/repos', { method: 'POST', body: JSON.stringify({ name: 'anon' }) });
    expect(response.status).toBe(401);
  });
});

describe('routing', () => {
  it.each([
    ['GET', '/api/v3/no/such/route'],
    ['DELETE', '/api/v3/user'],
  ])('%s %s is a JSON 404', async (method, path) => {
    const response = await fetch(`${stack.webUrl}${path}`, { method });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await json(response)).message).toBe('Not Found');
  });
});
