import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Octokit as OctokitClient } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, createUser, enableOtp } from '#test/fixtures';
import { startTestStack } from '#test/stack';

/**
 * The real `@octokit/rest` 16.43.2, the last release with `oauthAuthorizations.*`, configured as
 * for GitHub Enterprise (`baseUrl` = this service's `/api/v3`). Every request here goes through
 * Octokit; the fixtures only create users and applications with the admin CLI.
 *
 * v16 is CommonJS and attaches `Octokit` with `Object.assign`, which Node's ESM named-export
 * detection cannot see, so it is loaded with `require`.
 */
const requireFromHere = createRequire(import.meta.url);
const { Octokit } = requireFromHere('@octokit/rest') as typeof import('@octokit/rest');
/** The very `node-fetch` that Octokit's own `@octokit/request` sends with, so recording changes nothing on the wire. */
const nodeFetch = createRequire(
  createRequire(requireFromHere.resolve('@octokit/rest')).resolve('@octokit/request'),
)('node-fetch') as (
  url: string,
  init: { method: string; headers: Record<string, string> },
) => Promise<unknown>;

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type User = Awaited<ReturnType<typeof createUser>>;
type App = Awaited<ReturnType<typeof createApp>>;
/** Octokit v16 types most of these responses as `any`; the assertions say what shape they must have. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
type Body = any;

/** What Octokit put on the wire, recorded by the `fetch` it sends with. */
interface SentRequest {
  readonly method: string;
  readonly url: string;
  readonly authorization: string | undefined;
  readonly otp: string | undefined;
}

/** `@octokit/request` 5 takes `request.fetch`; v16's typings for the option predate it. */
type OctokitRequestOptions = NonNullable<OctokitClient.Options['request']>;

let stack: Stack;
let octocat: User;
let hubot: User;
let app: App;

/** Octokit's deprecation notices (every method here is deprecated in v16) are expected; anything else is shown. */
const log = {
  warn: (message: string) => {
    if (!/deprecated|renamed/.test(String(message))) console.warn(message);
  },
};

// biome-ignore lint/suspicious/noExplicitAny: v16's `auth` option is typed as a union with `any`
function client(auth: any): { octokit: OctokitClient; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const fetch = (url: string, init: { method: string; headers: Record<string, string> }) => {
    sent.push({
      method: init.method,
      url,
      authorization: init.headers.authorization,
      otp: init.headers['x-github-otp'],
    });
    return nodeFetch(url, init);
  };
  return {
    octokit: new Octokit({ baseUrl: stack.baseUrl, auth, log, request: { fetch } as OctokitRequestOptions }),
    sent,
  };
}

const basicAs = (user: User) => client({ username: user.login, password: user.password });
const tokenClient = (token: string) => client(`token ${token}`).octokit;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The `RequestError` a call rejected with (fails the test if it resolved). */
async function rejection(
  call: Promise<unknown>,
): Promise<{ status: number; message: string; headers: Record<string, string> }> {
  return call.then(
    (response) => {
      throw new Error(`expected the request to fail, got ${(response as { status: number }).status}`);
    },
    (error: { status: number; message: string; headers: Record<string, string> }) => error,
  );
}

beforeAll(async () => {
  stack = await startTestStack();
  octocat = await createUser(stack.endpointsFile, 'octocat');
  hubot = await createUser(stack.endpointsFile, 'hubot');
  app = await createApp(stack.endpointsFile, 'hubot', 'Hubot App');
});
afterAll(async () => {
  await stack?.stop();
});

describe('Octokit v16 oauthAuthorizations with Basic { username, password }', () => {
  it('createAuthorization: 201, Location, a ghp_ token that then authenticates users.getAuthenticated', async () => {
    const { octokit, sent } = basicAs(octocat);
    const created = await octokit.oauthAuthorizations.createAuthorization({
      note: 'octokit v16',
      note_url: 'https://cli.example',
      scopes: ['user', 'gist', 'user:email'],
    });
    const body: Body = created.data;
    expect(created.status).toBe(201);
    expect(created.headers).toMatchObject({ location: `${stack.baseUrl}/authorizations/${body.id}` });
    expect(body.token).toMatch(/^ghp_[0-9A-Za-z]{36}$/);
    expect(body).toMatchObject({
      scopes: ['gist', 'user'],
      note: 'octokit v16',
      hashed_token: sha256(body.token),
      token_last_eight: body.token.slice(-8),
    });
    expect(sent[0]?.authorization).toBe(
      `Basic ${Buffer.from(`${octocat.login}:${octocat.password}`).toString('base64')}`,
    );

    const me = await tokenClient(body.token).users.getAuthenticated();
    expect(me.data.login).toBe('octocat');
    expect((me.headers as Record<string, string>)['x-oauth-scopes']).toBe('gist, user');
  });

  it('rejects a wrong password with RequestError 401 "Bad credentials"', async () => {
    const { octokit } = client({ username: octocat.login, password: 'wrong-password-1' });
    const error = await rejection(octokit.oauthAuthorizations.listAuthorizations());
    expect(error.status).toBe(401);
    expect(error.message).toBe('Bad credentials');
  });

  it('paginate with per_page 2 follows Link rel="next" over 3 pages and returns all 5 ids once, in order', async () => {
    const pager = await createUser(stack.endpointsFile, 'pager');
    const { octokit, sent } = basicAs(pager);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await octokit.oauthAuthorizations.createAuthorization({ note: `page-${i}` })).data.id);
    sent.length = 0;

    const all: Body[] = await octokit.paginate(
      octokit.oauthAuthorizations.listAuthorizations.endpoint.merge({ per_page: 2 }),
    );

    expect(all.map((a) => a.id)).toEqual(ids);
    expect(all.every((a) => a.token === '')).toBe(true);
    expect(sent.map((r) => r.url)).toEqual([
      `${stack.baseUrl}/authorizations?per_page=2`,
      `${stack.baseUrl}/authorizations?per_page=2&page=2`,
      `${stack.baseUrl}/authorizations?per_page=2&page=3`,
    ]);
  });

  it('getAuthorization and updateAuthorization (add_scopes): the token carries the new scopes', async () => {
    const { octokit } = basicAs(octocat);
    const { data: created } = await octokit.oauthAuthorizations.createAuthorization({
      note: 'to update',
      scopes: ['gist'],
    });

    const fetched = await octokit.oauthAuthorizations.getAuthorization({ authorization_id: created.id });
    expect(fetched.status).toBe(200);
    expect(fetched.data).toMatchObject({
      id: created.id,
      token: '',
      scopes: ['gist'],
      hashed_token: sha256(created.token),
    });

    const updated = await octokit.oauthAuthorizations.updateAuthorization({
      authorization_id: created.id,
      add_scopes: ['repo', 'public_repo'],
    });
    expect(updated.status).toBe(200);
    expect(updated.data).toMatchObject({ id: created.id, scopes: ['gist', 'repo'], token: '' });
    const me = await tokenClient(created.token).users.getAuthenticated();
    expect((me.headers as Record<string, string>)['x-oauth-scopes']).toBe('gist, repo');
  });

  it('getOrCreateAuthorizationForApp: 201 with a gho_ token, then 200 with the same id and an empty token', async () => {
    const user = await createUser(stack.endpointsFile, 'getorcreate');
    const { octokit } = basicAs(user);
    const first = await octokit.oauthAuthorizations.getOrCreateAuthorizationForApp({
      client_id: app.clientId,
      client_secret: app.clientSecret,
      scopes: ['gist'],
      note: 'goc',
    });
    expect(first.status).toBe(201);
    const created: Body = first.data;
    expect(created.token).toMatch(/^gho_[0-9A-Za-z]{36}$/);
    expect(created.app).toEqual({ name: 'Hubot App', url: 'https://app.example', client_id: app.clientId });

    const second = await octokit.oauthAuthorizations.getOrCreateAuthorizationForApp({
      client_id: app.clientId,
      client_secret: app.clientSecret,
      scopes: ['gist'],
    });
    expect(second.status).toBe(200);
    expect(second.data).toMatchObject({ id: created.id, token: '', scopes: ['gist'] });
  });

  it('getOrCreateAuthorizationForAppAndFingerprint: 201 then 200 with the same id, distinct from the unfingerprinted one', async () => {
    const user = await createUser(stack.endpointsFile, 'fingerprinted');
    const { octokit } = basicAs(user);
    const plain = await octokit.oauthAuthorizations.getOrCreateAuthorizationForApp({
      client_id: app.clientId,
      client_secret: app.clientSecret,
    });
    const params = {
      client_id: app.clientId,
      client_secret: app.clientSecret,
      fingerprint: 'laptop',
      scopes: ['repo'],
    };

    const first = await octokit.oauthAuthorizations.getOrCreateAuthorizationForAppAndFingerprint(params);
    expect(first.status).toBe(201);
    const created: Body = first.data;
    expect(created).toMatchObject({ fingerprint: 'laptop', scopes: ['repo'] });
    expect(created.token).toMatch(/^gho_/);
    expect(created.id).not.toBe(plain.data.id);

    const second = await octokit.oauthAuthorizations.getOrCreateAuthorizationForAppAndFingerprint(params);
    expect(second.status).toBe(200);
    expect(second.data).toMatchObject({ id: created.id, fingerprint: 'laptop', token: '' });
  });

  it('deleteAuthorization: 204, then getAuthorization is 404 and the token is 401', async () => {
    const { octokit } = basicAs(octocat);
    const { data: created } = await octokit.oauthAuthorizations.createAuthorization({ note: 'to delete' });
    expect((await tokenClient(created.token).users.getAuthenticated()).status).toBe(200);

    const deleted = await octokit.oauthAuthorizations.deleteAuthorization({ authorization_id: created.id });
    expect(deleted.status).toBe(204);
    expect(
      (await rejection(octokit.oauthAuthorizations.getAuthorization({ authorization_id: created.id })))
        .status,
    ).toBe(404);
    expect((await rejection(tokenClient(created.token).users.getAuthenticated())).status).toBe(401);
  });

  it('listGrants, getGrant, deleteGrant: one grant per app with the union of scopes; deleting it revokes its tokens', async () => {
    const user = await createUser(stack.endpointsFile, 'granter');
    const { octokit } = basicAs(user);
    const forApp = (note: string, scopes: string[]) =>
      octokit.oauthAuthorizations.createAuthorization({
        note,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        scopes,
      });
    const { data: repoToken } = await forApp('a', ['repo']);
    const { data: userToken } = await forApp('b', ['user']);
    await octokit.oauthAuthorizations.createAuthorization({ note: 'personal tokens make no grant' });

    const grants = await octokit.oauthAuthorizations.listGrants();
    expect(grants.status).toBe(200);
    expect(grants.data).toHaveLength(1);
    const grant: Body = grants.data[0];
    expect(grant).toMatchObject({
      scopes: ['repo', 'user'],
      app: { client_id: app.clientId, name: 'Hubot App' },
      url: `${stack.baseUrl}/applications/grants/${grant.id}`,
    });

    const fetched = await octokit.oauthAuthorizations.getGrant({ grant_id: grant.id });
    expect(fetched.data).toEqual(grant);

    expect((await octokit.oauthAuthorizations.deleteGrant({ grant_id: grant.id })).status).toBe(204);
    expect((await rejection(tokenClient(repoToken.token).users.getAuthenticated())).status).toBe(401);
    expect((await rejection(tokenClient(userToken.token).users.getAuthenticated())).status).toBe(401);
    expect((await rejection(octokit.oauthAuthorizations.getGrant({ grant_id: grant.id }))).status).toBe(404);
    expect((await octokit.oauthAuthorizations.listGrants()).data).toEqual([]);
  });
});

describe('Octokit v16 application-side methods, authenticated as the app', () => {
  const appToken = async (user: User, scopes = ['repo']): Promise<Body> =>
    (
      await basicAs(user).octokit.oauthAuthorizations.createAuthorization({
        note: `n-${Math.random()}`,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        scopes,
      })
    ).data;
  const basic = (app: App) =>
    `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`;

  it('checkAuthorization with v16 { clientId, clientSecret }: Basic client_id:client_secret, 200 with the token and its user', async () => {
    const created = await appToken(octocat);
    const { octokit, sent } = client({ clientId: app.clientId, clientSecret: app.clientSecret });

    const checked = await octokit.oauthAuthorizations.checkAuthorization({
      client_id: app.clientId,
      access_token: created.token,
    });

    expect(checked.status).toBe(200);
    expect(checked.data).toMatchObject({
      id: created.id,
      token: created.token,
      hashed_token: created.hashed_token,
      scopes: ['repo'],
      user: { login: 'octocat', type: 'User' },
    });
    expect(sent).toEqual([
      {
        method: 'GET',
        url: `${stack.baseUrl}/applications/${app.clientId}/tokens/${created.token}`,
        authorization: basic(app),
        otp: undefined,
      },
    ]);
  });

  it('checkAuthorization with Basic { username: client_id, password: client_secret } works the same', async () => {
    const created = await appToken(octocat);
    const { octokit } = client({ username: app.clientId, password: app.clientSecret });
    const checked = await octokit.oauthAuthorizations.checkAuthorization({
      client_id: app.clientId,
      access_token: created.token,
    });
    expect(checked.data).toMatchObject({ id: created.id, token: created.token, user: { login: 'octocat' } });
  });

  it('checkAuthorization of an unknown token or with a wrong secret: RequestError 404', async () => {
    const created = await appToken(octocat);
    const { octokit } = client({ clientId: app.clientId, clientSecret: app.clientSecret });
    expect(
      (
        await rejection(
          octokit.oauthAuthorizations.checkAuthorization({
            client_id: app.clientId,
            access_token: `gho_${'x'.repeat(36)}`,
          }),
        )
      ).status,
    ).toBe(404);
    const wrong = client({ clientId: app.clientId, clientSecret: 'f'.repeat(40) }).octokit;
    expect(
      (
        await rejection(
          wrong.oauthAuthorizations.checkAuthorization({
            client_id: app.clientId,
            access_token: created.token,
          }),
        )
      ).status,
    ).toBe(404);
  });

  it('resetAuthorization: a new gho_ token with the same id; the old token then gets 401 on users.getAuthenticated', async () => {
    const created = await appToken(octocat);
    const { octokit } = client({ clientId: app.clientId, clientSecret: app.clientSecret });

    const reset = await octokit.oauthAuthorizations.resetAuthorization({
      client_id: app.clientId,
      access_token: created.token,
    });

    expect(reset.status).toBe(200);
    const body: Body = reset.data;
    expect(body.id).toBe(created.id);
    expect(body.token).toMatch(/^gho_[0-9A-Za-z]{36}$/);
    expect(body.token).not.toBe(created.token);
    expect(body.hashed_token).toBe(sha256(body.token));
    expect(body.user.login).toBe('octocat');
    const old = new Octokit({ baseUrl: stack.baseUrl, auth: `token ${created.token}`, log });
    expect((await rejection(old.users.getAuthenticated())).status).toBe(401);
    expect((await tokenClient(body.token).users.getAuthenticated()).data.login).toBe('octocat');
  });

  it('revokeAuthorizationForApplication: 204, then the token is 401 and checkAuthorization 404', async () => {
    const created = await appToken(octocat);
    const { octokit } = client({ clientId: app.clientId, clientSecret: app.clientSecret });

    const revoked = await octokit.oauthAuthorizations.revokeAuthorizationForApplication({
      client_id: app.clientId,
      access_token: created.token,
    });

    expect(revoked.status).toBe(204);
    expect((await rejection(tokenClient(created.token).users.getAuthenticated())).status).toBe(401);
    expect(
      (
        await rejection(
          octokit.oauthAuthorizations.checkAuthorization({
            client_id: app.clientId,
            access_token: created.token,
          }),
        )
      ).status,
    ).toBe(404);
  });

  it('revokeGrantForApplication (v16 sends client_id/client_secret as query parameters): 204, every token of that user for the app stops', async () => {
    const user = await createUser(stack.endpointsFile, 'revokee');
    const one = await appToken(user, ['repo']);
    const two = await appToken(user, ['user']);
    const others = await appToken(hubot, ['repo']);
    const { octokit, sent } = client({ clientId: app.clientId, clientSecret: app.clientSecret });

    const revoked = await octokit.oauthAuthorizations.revokeGrantForApplication({
      client_id: app.clientId,
      access_token: one.token,
    });

    expect(revoked.status).toBe(204);
    expect(sent[0]).toMatchObject({ method: 'DELETE', authorization: undefined });
    expect(new URL(sent[0]?.url ?? '').searchParams.get('client_secret')).toBe(app.clientSecret);
    expect((await rejection(tokenClient(one.token).users.getAuthenticated())).status).toBe(401);
    expect((await rejection(tokenClient(two.token).users.getAuthenticated())).status).toBe(401);
    expect((await tokenClient(others.token).users.getAuthenticated()).data.login).toBe('hubot');
    expect((await basicAs(user).octokit.oauthAuthorizations.listGrants()).data).toEqual([]);
  });
});

describe('Octokit v16 Basic auth with on2fa for a user with TOTP', () => {
  it('asks on2fa after the 401 X-GitHub-OTP challenge, retries with the code and succeeds; a replayed code makes it ask again', async () => {
    const user = await createUser(stack.endpointsFile, 'twofactor');
    const otp = await enableOtp(stack.endpointsFile, user.login);
    const codes: string[] = [];
    // Each code is good once (replay protection); a second one within the same 30 s step is the next step's.
    const on2fa = async () => {
      const code = otp.code(codes.length);
      codes.push(code);
      return code;
    };
    const { octokit, sent } = client({ username: user.login, password: user.password, on2fa });

    const created = await octokit.oauthAuthorizations.createAuthorization({
      note: '2fa token',
      scopes: ['repo'],
    });

    expect(codes).toHaveLength(1);
    expect(created.status).toBe(201);
    expect(created.data.token).toMatch(/^ghp_/);
    expect(sent.map((r) => r.otp)).toEqual([undefined, codes[0]]);

    // v16 keeps the code and sends it again; the service refuses the replay with the same
    // challenge, and Octokit drops the code and asks on2fa for a fresh one.
    const listed = await octokit.oauthAuthorizations.listAuthorizations();

    expect(codes).toHaveLength(2);
    expect(listed.data.map((a: Body) => a.id)).toEqual([created.data.id]);
    expect(sent.map((r) => r.otp)).toEqual([undefined, codes[0], codes[0], codes[1]]);
  });

  it('without on2fa, Octokit surfaces the challenge as RequestError 401 with X-GitHub-OTP: required; app', async () => {
    const user = await createUser(stack.endpointsFile, 'twofactor2');
    await enableOtp(stack.endpointsFile, user.login);
    const { octokit } = client({ username: user.login, password: user.password });
    const error = await rejection(octokit.oauthAuthorizations.listAuthorizations());
    expect(error.status).toBe(401);
    expect(error.headers['x-github-otp']).toBe('required; app');
  });
});
