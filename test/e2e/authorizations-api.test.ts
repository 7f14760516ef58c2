import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, createUser, personalToken } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let octocat: Awaited<ReturnType<typeof createUser>>;
let hubot: Awaited<ReturnType<typeof createUser>>;
let app: Awaited<ReturnType<typeof createApp>>;
let otherApp: Awaited<ReturnType<typeof createApp>>;

const api = (path: string, init: RequestInit & { auth?: string } = {}) => {
  const { auth, ...rest } = init;
  return fetch(`${stack.baseUrl}${path}`, {
    ...rest,
    headers: { ...(auth ? { Authorization: auth } : {}), ...rest.headers },
  });
};
const post = (path: string, auth: string, body: unknown, method = 'POST') =>
  api(path, { method, auth, body: JSON.stringify(body) });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const tokenAuth = (token: string) => `token ${token}`;

beforeAll(async () => {
  stack = await startTestStack();
  octocat = await createUser(stack.endpointsFile, 'octocat');
  hubot = await createUser(stack.endpointsFile, 'hubot');
  app = await createApp(stack.endpointsFile, 'hubot', 'Hubot App');
  otherApp = await createApp(stack.endpointsFile, 'hubot', 'Other App');
});
afterAll(async () => {
  await stack?.stop();
});

describe('POST /authorizations (personal access tokens)', () => {
  it('creates: 201, Location, the full token once, its hash and last eight, normalized scopes', async () => {
    const response = await post('/authorizations', octocat.auth, {
      scopes: ['user', 'gist', 'user:email'],
      note: 'my cli',
      note_url: 'https://cli.example',
    });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(response.headers.get('location')).toBe(`${stack.baseUrl}/authorizations/${body.id}`);
    expect(body.token).toMatch(/^ghp_[0-9A-Za-z]{36}$/);
    expect(body).toMatchObject({
      url: `${stack.baseUrl}/authorizations/${body.id}`,
      scopes: ['gist', 'user'],
      hashed_token: sha256(body.token),
      token_last_eight: body.token.slice(-8),
      note: 'my cli',
      note_url: 'https://cli.example',
      fingerprint: '',
      app: { name: 'my cli', url: 'https://cli.example', client_id: '00000000000000000000' },
    });
    expect(Object.keys(body)).toEqual([
      'id',
      'url',
      'app',
      'token',
      'hashed_token',
      'token_last_eight',
      'note',
      'note_url',
      'created_at',
      'updated_at',
      'scopes',
      'fingerprint',
    ]);

    const fetched = await json(await api(`/authorizations/${body.id}`, { auth: octocat.auth }));
    expect(fetched.token).toBe('');
    expect(fetched.hashed_token).toBe(body.hashed_token);
  });

  it('needs a note (422 missing_field), unique per user (422 already_exists)', async () => {
    const missing = await post('/authorizations', octocat.auth, { scopes: [] });
    expect(missing.status).toBe(422);
    expect((await json(missing)).errors).toEqual([
      { resource: 'OauthAccess', field: 'note', code: 'missing_field' },
    ]);

    expect((await post('/authorizations', octocat.auth, { note: 'unique-note' })).status).toBe(201);
    const duplicate = await post('/authorizations', octocat.auth, { note: 'unique-note' });
    expect(duplicate.status).toBe(422);
    expect((await json(duplicate)).errors).toEqual([
      { resource: 'OauthAccess', field: 'note', code: 'already_exists' },
    ]);
    // Another user may use the same note.
    expect((await post('/authorizations', hubot.auth, { note: 'unique-note' })).status).toBe(201);
  });

  it('names invalid scopes in a 422', async () => {
    const response = await post('/authorizations', octocat.auth, {
      note: 'bad scopes',
      scopes: ['repo', 'nope', 'user,gist'],
    });
    expect(response.status).toBe(422);
    expect((await json(response)).errors).toEqual([
      {
        resource: 'OauthAccess',
        field: 'scopes',
        code: 'custom',
        message: 'scopes are invalid: nope,user,gist',
      },
    ]);
  });

  it("creates app tokens only with the application's secret", async () => {
    const created = await post('/authorizations', octocat.auth, {
      note: 'for app',
      client_id: app.clientId,
      client_secret: app.clientSecret,
      scopes: ['repo'],
    });
    expect(created.status).toBe(201);
    const body = await json(created);
    expect(body.token).toMatch(/^gho_/);
    expect(body.app).toEqual({ name: 'Hubot App', url: 'https://app.example', client_id: app.clientId });

    const wrongSecret = await post('/authorizations', octocat.auth, {
      note: 'x',
      client_id: app.clientId,
      client_secret: 'f'.repeat(40),
    });
    expect(wrongSecret.status).toBe(422);
    expect((await json(wrongSecret)).errors[0]).toMatchObject({ field: 'client_secret', code: 'invalid' });
    const unknownApp = await post('/authorizations', octocat.auth, {
      note: 'x',
      client_id: 'f'.repeat(20),
      client_secret: 'f'.repeat(40),
    });
    expect((await json(unknownApp)).errors[0]).toMatchObject({ field: 'client_id', code: 'invalid' });
  });
});

describe('authorizations refuse tokens', () => {
  it('answers a token on the password-only API with 401 and says why', async () => {
    const { token } = await personalToken(stack.baseUrl, octocat.auth, ['user']);
    for (const path of ['/authorizations', '/applications/grants']) {
      const response = await api(path, { auth: tokenAuth(token) });
      expect(response.status).toBe(401);
      expect((await json(response)).message).toBe(
        'This API can only be accessed with username and password Basic Auth',
      );
    }
    expect((await api('/authorizations')).status).toBe(401);
  });
});

describe('GET /authorizations', () => {
  it('pages with Link (next, last, first, prev), per_page echoed, token always empty', async () => {
    const user = await createUser(stack.endpointsFile, 'pager');
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await personalToken(stack.baseUrl, user.auth, [], `page-${i}`)).id);

    const first = await api('/authorizations?per_page=2', { auth: user.auth });
    expect(first.headers.get('link')).toBe(
      `<${stack.baseUrl}/authorizations?per_page=2&page=2>; rel="next", <${stack.baseUrl}/authorizations?per_page=2&page=3>; rel="last"`,
    );
    const firstPage = await json(first);
    expect(firstPage.map((a: { id: number }) => a.id)).toEqual(ids.slice(0, 2));
    expect(firstPage.every((a: { token: string }) => a.token === '')).toBe(true);

    const middle = await api('/authorizations?per_page=2&page=2', { auth: user.auth });
    expect(middle.headers.get('link')).toContain('rel="prev"');
    expect(middle.headers.get('link')).toContain('rel="first"');
    const last = await json(await api('/authorizations?per_page=2&page=3', { auth: user.auth }));
    expect(last.map((a: { id: number }) => a.id)).toEqual(ids.slice(4));
    expect((await api('/authorizations', { auth: user.auth })).headers.get('link')).toBeNull();
  });

  it("shows only the caller's own (404 for another user's id)", async () => {
    const { id } = await personalToken(stack.baseUrl, octocat.auth, []);
    expect((await api(`/authorizations/${id}`, { auth: hubot.auth })).status).toBe(404);
    expect((await api('/authorizations/not-a-number', { auth: hubot.auth })).status).toBe(404);
  });
});

describe('PATCH /authorizations/:id', () => {
  it('replaces, adds and removes scopes, one kind per request', async () => {
    const { id, token } = await personalToken(stack.baseUrl, octocat.auth, ['gist']);
    const added = await json(
      await post(`/authorizations/${id}`, octocat.auth, { add_scopes: ['repo', 'public_repo'] }, 'PATCH'),
    );
    expect(added).toMatchObject({ scopes: ['gist', 'repo'], token: '' });
    const removed = await json(
      await post(`/authorizations/${id}`, octocat.auth, { remove_scopes: ['gist'] }, 'PATCH'),
    );
    expect(removed.scopes).toEqual(['repo']);
    const replaced = await json(
      await post(
        `/authorizations/${id}`,
        octocat.auth,
        { scopes: ['user'], note: 'renamed', note_url: 'https://n.example' },
        'PATCH',
      ),
    );
    expect(replaced).toMatchObject({ scopes: ['user'], note: 'renamed', note_url: 'https://n.example' });
    // The token carries the new scopes at once.
    expect((await api('/user', { auth: tokenAuth(token) })).headers.get('x-oauth-scopes')).toBe('user');

    const both = await post(
      `/authorizations/${id}`,
      octocat.auth,
      { scopes: ['user'], add_scopes: ['gist'] },
      'PATCH',
    );
    expect(both.status).toBe(422);
    expect((await json(both)).errors[0]).toMatchObject({
      resource: 'OauthAccess',
      field: 'scopes',
      code: 'custom',
    });
    expect((await json(await api(`/authorizations/${id}`, { auth: octocat.auth }))).scopes).toEqual(['user']);
  });
});

describe('DELETE /authorizations/:id', () => {
  it('stops the token at once', async () => {
    const { id, token } = await personalToken(stack.baseUrl, octocat.auth, []);
    expect((await api('/user', { auth: tokenAuth(token) })).status).toBe(200);
    expect((await api(`/authorizations/${id}`, { method: 'DELETE', auth: octocat.auth })).status).toBe(204);
    expect((await api('/user', { auth: tokenAuth(token) })).status).toBe(401);
    expect((await api(`/authorizations/${id}`, { auth: octocat.auth })).status).toBe(404);
    expect((await api(`/authorizations/${id}`, { method: 'DELETE', auth: octocat.auth })).status).toBe(404);
  });
});

describe('PUT /authorizations/clients/:client_id (get-or-create)', () => {
  it('creates once (201 with token), then returns the same one (200, empty token), Location both times', async () => {
    const user = await createUser(stack.endpointsFile, 'getorcreate');
    const first = await post(
      `/authorizations/clients/${app.clientId}`,
      user.auth,
      { client_secret: app.clientSecret, scopes: ['gist'], note: 'goc' },
      'PUT',
    );
    expect(first.status).toBe(201);
    const created = await json(first);
    expect(created.token).toMatch(/^gho_/);
    expect(first.headers.get('location')).toBe(`${stack.baseUrl}/authorizations/${created.id}`);

    const second = await post(
      `/authorizations/clients/${app.clientId}`,
      user.auth,
      { client_secret: app.clientSecret },
      'PUT',
    );
    expect(second.status).toBe(200);
    const existing = await json(second);
    expect(existing).toMatchObject({ id: created.id, token: '', scopes: ['gist'] });
    expect(second.headers.get('location')).toBe(`${stack.baseUrl}/authorizations/${created.id}`);

    const fingerprinted = await post(
      `/authorizations/clients/${app.clientId}/laptop`,
      user.auth,
      { client_secret: app.clientSecret },
      'PUT',
    );
    expect(fingerprinted.status).toBe(201);
    const laptop = await json(fingerprinted);
    expect(laptop.fingerprint).toBe('laptop');
    const viaBody = await post(
      `/authorizations/clients/${app.clientId}`,
      user.auth,
      { client_secret: app.clientSecret, fingerprint: 'laptop' },
      'PUT',
    );
    expect(viaBody.status).toBe(200);
    expect((await json(viaBody)).id).toBe(laptop.id);
  });

  it('under 20 concurrent identical requests, exactly one authorization exists afterwards', async () => {
    const user = await createUser(stack.endpointsFile, 'racer');
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        post(
          `/authorizations/clients/${app.clientId}`,
          user.auth,
          { client_secret: app.clientSecret, scopes: ['repo'] },
          'PUT',
        ),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    const ids = new Set(await Promise.all(responses.map(async (r) => (await json(r)).id)));
    expect(ids.size).toBe(1);
    expect(await json(await api('/authorizations', { auth: user.auth }))).toHaveLength(1);
  });

  it('needs the right client secret; an unknown client is 404', async () => {
    const missing = await post(`/authorizations/clients/${app.clientId}`, octocat.auth, {}, 'PUT');
    expect(missing.status).toBe(422);
    expect((await json(missing)).errors[0]).toMatchObject({ field: 'client_secret', code: 'missing_field' });
    expect(
      (
        await post(
          `/authorizations/clients/${app.clientId}`,
          octocat.auth,
          { client_secret: otherApp.clientSecret },
          'PUT',
        )
      ).status,
    ).toBe(422);
    expect(
      (
        await post(
          `/authorizations/clients/${'0'.repeat(20)}`,
          octocat.auth,
          { client_secret: app.clientSecret },
          'PUT',
        )
      ).status,
    ).toBe(404);
  });
});

describe('token limit', () => {
  it('the 11th token for one user/app/scope set makes the oldest stop working', async () => {
    const user = await createUser(stack.endpointsFile, 'limited');
    const tokens: string[] = [];
    for (let i = 0; i < 11; i++) {
      const response = await post('/authorizations', user.auth, {
        note: `t${i}`,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        scopes: ['gist'],
      });
      tokens.push((await json(response)).token);
    }
    expect((await api('/user', { auth: tokenAuth(tokens[0] ?? '') })).status).toBe(401);
    expect((await api('/user', { auth: tokenAuth(tokens[1] ?? '') })).status).toBe(200);
    expect((await api('/user', { auth: tokenAuth(tokens[10] ?? '') })).status).toBe(200);
    expect(await json(await api('/authorizations', { auth: user.auth }))).toHaveLength(10);
  });
});

describe('grants', () => {
  it("list one grant per application with the union of its tokens' scopes; deleting one revokes all its tokens", async () => {
    const user = await createUser(stack.endpointsFile, 'granter');
    const mk = (scopes: string[], note: string, which = app) =>
      post('/authorizations', user.auth, {
        note,
        client_id: which.clientId,
        client_secret: which.clientSecret,
        scopes,
      }).then(json);
    const repoToken = await mk(['repo'], 'a');
    const userToken = await mk(['user'], 'b');
    await mk(['gist'], 'c', otherApp);
    await personalToken(stack.baseUrl, user.auth, ['gist'], 'personal tokens make no grant');

    const grants = await json(await api('/applications/grants', { auth: user.auth }));
    expect(grants).toHaveLength(2);
    const grant = grants.find((g: { app: { client_id: string } }) => g.app.client_id === app.clientId);
    expect(grant).toMatchObject({
      scopes: ['repo', 'user'],
      app: { name: 'Hubot App', url: 'https://app.example' },
      url: `${stack.baseUrl}/applications/grants/${grant.id}`,
    });
    expect(await json(await api(`/applications/grants/${grant.id}`, { auth: user.auth }))).toEqual(grant);
    expect((await api(`/applications/grants/${grant.id}`, { auth: octocat.auth })).status).toBe(404);

    expect(
      (await api(`/applications/grants/${grant.id}`, { method: 'DELETE', auth: user.auth })).status,
    ).toBe(204);
    expect((await api('/user', { auth: tokenAuth(repoToken.token) })).status).toBe(401);
    expect((await api('/user', { auth: tokenAuth(userToken.token) })).status).toBe(401);
    expect((await api(`/applications/grants/${grant.id}`, { auth: user.auth })).status).toBe(404);
    expect(await json(await api('/applications/grants', { auth: user.auth }))).toHaveLength(1);
  });

  it('disappears when its last token is deleted', async () => {
    const user = await createUser(stack.endpointsFile, 'lastone');
    const only = await json(
      await post('/authorizations', user.auth, {
        note: 'only',
        client_id: app.clientId,
        client_secret: app.clientSecret,
      }),
    );
    expect(await json(await api('/applications/grants', { auth: user.auth }))).toHaveLength(1);
    await api(`/authorizations/${only.id}`, { method: 'DELETE', auth: user.auth });
    expect(await json(await api('/applications/grants', { auth: user.auth }))).toEqual([]);
  });
});

describe('application-side token endpoints', () => {
  const appToken = async (user: { auth: string }, scopes: string[] = ['repo']) =>
    json(
      await post('/authorizations', user.auth, {
        note: `n${Math.random()}`,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        scopes,
      }),
    );

  it('check: 200 with the full token and its user; 404 for invalid tokens, other apps and wrong secrets', async () => {
    const created = await appToken(octocat);
    const check = await api(`/applications/${app.clientId}/tokens/${created.token}`, { auth: app.basic });
    expect(check.status).toBe(200);
    const body = await json(check);
    expect(body).toMatchObject({
      id: created.id,
      token: created.token,
      hashed_token: created.hashed_token,
      user: { login: 'octocat', type: 'User' },
    });
    expect(Object.keys(body.user)).toEqual(
      expect.arrayContaining([
        'login',
        'id',
        'avatar_url',
        'gravatar_id',
        'url',
        'html_url',
        'followers_url',
        'following_url',
        'gists_url',
        'starred_url',
        'subscriptions_url',
        'organizations_url',
        'repos_url',
        'events_url',
        'received_events_url',
        'type',
        'site_admin',
      ]),
    );

    // Client credentials as query parameters work too.
    const viaQuery = await api(
      `/applications/${app.clientId}/tokens/${created.token}?client_id=${app.clientId}&client_secret=${app.clientSecret}`,
    );
    expect(viaQuery.status).toBe(200);

    expect(
      (await api(`/applications/${app.clientId}/tokens/gho_${'x'.repeat(36)}`, { auth: app.basic })).status,
    ).toBe(404);
    expect(
      (await api(`/applications/${otherApp.clientId}/tokens/${created.token}`, { auth: otherApp.basic }))
        .status,
    ).toBe(404);
    expect(
      (await api(`/applications/${app.clientId}/tokens/${created.token}`, { auth: otherApp.basic })).status,
    ).toBe(404);
    expect((await api(`/applications/${app.clientId}/tokens/${created.token}`)).status).toBe(404);
  });

  it('reset: a new token with the same id; the old one fails on the next request', async () => {
    const created = await appToken(octocat);
    const reset = await api(`/applications/${app.clientId}/tokens/${created.token}`, {
      method: 'POST',
      auth: app.basic,
    });
    expect(reset.status).toBe(200);
    const body = await json(reset);
    expect(body.id).toBe(created.id);
    expect(body.token).not.toBe(created.token);
    expect(body.hashed_token).toBe(sha256(body.token));
    expect(body.user.login).toBe('octocat');
    expect((await api('/user', { auth: tokenAuth(created.token) })).status).toBe(401);
    expect((await api('/user', { auth: tokenAuth(body.token) })).status).toBe(200);
    expect(
      (await api(`/applications/${app.clientId}/tokens/${created.token}`, { auth: app.basic })).status,
    ).toBe(404);
    expect(
      (
        await api(`/applications/${app.clientId}/tokens/${created.token}`, {
          method: 'POST',
          auth: app.basic,
        })
      ).status,
    ).toBe(404);
  });

  it('revoke: 204 and the token stops working', async () => {
    const created = await appToken(octocat);
    expect(
      (
        await api(`/applications/${app.clientId}/tokens/${created.token}`, {
          method: 'DELETE',
          auth: app.basic,
        })
      ).status,
    ).toBe(204);
    expect((await api('/user', { auth: tokenAuth(created.token) })).status).toBe(401);
    expect(
      (await api(`/applications/${app.clientId}/tokens/${created.token}`, { auth: app.basic })).status,
    ).toBe(404);
  });

  it('revoke grant: every token of the app for that user stops working, other users keep theirs', async () => {
    const user = await createUser(stack.endpointsFile, 'revokee');
    const one = await appToken(user, ['repo']);
    const two = await appToken(user, ['user']);
    const others = await appToken(hubot, ['repo']);
    expect(
      (await api(`/applications/${app.clientId}/grants/${one.token}`, { method: 'DELETE', auth: app.basic }))
        .status,
    ).toBe(204);
    expect((await api('/user', { auth: tokenAuth(one.token) })).status).toBe(401);
    expect((await api('/user', { auth: tokenAuth(two.token) })).status).toBe(401);
    expect((await api('/user', { auth: tokenAuth(others.token) })).status).toBe(200);
    expect(await json(await api('/applications/grants', { auth: user.auth }))).toEqual([]);
  });
});
