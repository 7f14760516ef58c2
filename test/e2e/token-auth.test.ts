import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, createUser, enableOtp, personalToken } from '#test/fixtures';
import { basicAuth, json, startTestStack } from '#test/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let octocat: Awaited<ReturnType<typeof createUser>>;

const api = (path: string, headers: Record<string, string> = {}, init: RequestInit = {}) =>
  fetch(`${stack.baseUrl}${path}`, { ...init, headers });

beforeAll(async () => {
  stack = await startTestStack();
  octocat = await createUser(stack.endpointsFile, 'octocat');
});
afterAll(async () => {
  await stack?.stop();
});

describe('token authentication', () => {
  it('accepts the token header, Bearer, Basic with the token as password, and ?access_token=', async () => {
    const { token } = await personalToken(stack.baseUrl, octocat.auth, ['user']);
    const forms: Array<[string, Record<string, string>, string]> = [
      ['token header', { Authorization: `token ${token}` }, '/user'],
      ['Bearer', { Authorization: `Bearer ${token}` }, '/user'],
      ['Basic login:token', { Authorization: basicAuth('octocat', token) }, '/user'],
      ['Basic token:x-oauth-basic', { Authorization: basicAuth(token, 'x-oauth-basic') }, '/user'],
      ['query parameter', {}, `/user?access_token=${token}`],
    ];
    for (const [form, headers, path] of forms) {
      const response = await api(path, headers);
      expect(response.status, form).toBe(200);
      expect((await json(response)).login, form).toBe('octocat');
    }
  });

  it('sends X-OAuth-Scopes and X-Accepted-OAuth-Scopes on token requests only', async () => {
    const { token } = await personalToken(stack.baseUrl, octocat.auth, ['user', 'repo']);
    const withToken = await api('/user', { Authorization: `token ${token}` });
    expect(withToken.headers.get('x-oauth-scopes')).toBe('repo, user');
    expect(withToken.headers.get('x-accepted-oauth-scopes')).toBe('');
    const creating = await api(
      '/user/repos',
      { Authorization: `token ${token}` },
      { method: 'POST', body: JSON.stringify({ name: 'scoped' }) },
    );
    expect(creating.status).toBe(201);
    expect(creating.headers.get('x-accepted-oauth-scopes')).toBe('public_repo, repo');
    const withPassword = await api('/user', { Authorization: octocat.auth });
    expect(withPassword.headers.get('x-oauth-scopes')).toBeNull();
  });

  it('answers 404 when the token lacks the scopes the route accepts, with the scope headers', async () => {
    const { token } = await personalToken(stack.baseUrl, octocat.auth, ['gist']);
    const response = await api(
      '/user/repos',
      { Authorization: `token ${token}` },
      { method: 'POST', body: JSON.stringify({ name: 'nope' }) },
    );
    expect(response.status).toBe(404);
    expect(response.headers.get('x-oauth-scopes')).toBe('gist');
    expect(response.headers.get('x-accepted-oauth-scopes')).toBe('public_repo, repo');
    expect((await api('/repos/octocat/nope', { Authorization: octocat.auth })).status).toBe(404);
  });

  it('never grants more than the user has: public_repo cannot make or see private repositories', async () => {
    const { token: publicOnly } = await personalToken(stack.baseUrl, octocat.auth, ['public_repo']);
    const { token: full } = await personalToken(stack.baseUrl, octocat.auth, ['repo']);
    const auth = (t: string) => ({ Authorization: `token ${t}` });
    const body = JSON.stringify({ name: 'hidden', private: true });
    expect((await api('/user/repos', auth(publicOnly), { method: 'POST', body })).status).toBe(404);
    expect((await api('/user/repos', auth(full), { method: 'POST', body })).status).toBe(201);
    expect((await api('/repos/octocat/hidden', auth(publicOnly))).status).toBe(404);
    expect((await api('/repos/octocat/hidden', auth(full))).status).toBe(200);
    // Another user's full-scope token still cannot see it.
    const hubot = await createUser(stack.endpointsFile, 'hubot');
    const { token: hubots } = await personalToken(stack.baseUrl, hubot.auth, ['repo']);
    expect((await api('/repos/octocat/hidden', auth(hubots))).status).toBe(404);
  });

  it('answers 401 Bad credentials for unknown and look-alike tokens', async () => {
    for (const token of [`ghp_${'a'.repeat(36)}`, 'not-a-token', `gho_${'Z'.repeat(36)}`]) {
      const response = await api('/user', { Authorization: `token ${token}` });
      expect(response.status).toBe(401);
      expect((await json(response)).message).toBe('Bad credentials');
    }
  });
});

describe('two-factor authentication', () => {
  it('asks for the OTP code, accepts a valid one once, and refuses a replay or a wrong one', async () => {
    const user = await createUser(stack.endpointsFile, 'twofa');
    const otp = await enableOtp(stack.endpointsFile, 'twofa');

    const challenge = await api('/authorizations', { Authorization: user.auth });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get('x-github-otp')).toBe('required; app');
    expect(await json(challenge)).toEqual({
      message: 'Must specify two-factor authentication OTP code.',
      documentation_url: expect.stringContaining('two-factor-authentication'),
    });

    const code = otp.code();
    const ok = await api('/authorizations', { Authorization: user.auth, 'X-GitHub-OTP': code });
    expect(ok.status).toBe(200);
    const replay = await api('/authorizations', { Authorization: user.auth, 'X-GitHub-OTP': code });
    expect(replay.status).toBe(401);
    expect(replay.headers.get('x-github-otp')).toBe('required; app');

    const wrong = String((Number(otp.code(1)) + 1) % 1_000_000).padStart(6, '0');
    expect((await api('/authorizations', { Authorization: user.auth, 'X-GitHub-OTP': wrong })).status).toBe(
      401,
    );
    // The next step's code is within the allowed clock skew and not yet spent.
    const next = await api('/authorizations', { Authorization: user.auth, 'X-GitHub-OTP': otp.code(1) });
    expect(next.status).toBe(200);

    // Replays are refused but are not guesses: many of them do not lock the account.
    for (let i = 0; i < 12; i++) {
      expect((await api('/authorizations', { Authorization: user.auth, 'X-GitHub-OTP': code })).status).toBe(
        401,
      );
    }
    expect(
      (await api('/authorizations', { Authorization: user.auth, 'X-GitHub-OTP': otp.code(-1) })).status,
    ).not.toBe(403);

    // A wrong password is plain Bad credentials, whatever the code.
    const badPassword = await api('/user', {
      Authorization: basicAuth('twofa', 'wrong-pass-1'),
      'X-GitHub-OTP': otp.code(),
    });
    expect((await json(badPassword)).message).toBe('Bad credentials');
  });
});

describe('failed-login limit', () => {
  it('locks every Basic attempt for the login after repeated bad passwords, but not the app check endpoint', async () => {
    const user = await createUser(stack.endpointsFile, 'lockme');
    const app = await createApp(stack.endpointsFile, 'octocat', 'Checker');
    const appToken = await json(
      await api(
        '/authorizations',
        { Authorization: user.auth },
        {
          method: 'POST',
          body: JSON.stringify({ note: 'x', client_id: app.clientId, client_secret: app.clientSecret }),
        },
      ),
    );

    for (let i = 0; i < 10; i++) {
      expect((await api('/user', { Authorization: basicAuth('lockme', `wrong-${i}-pass`) })).status).toBe(
        401,
      );
    }
    const locked = await api('/user', { Authorization: user.auth });
    expect(locked.status).toBe(403);
    expect(await json(locked)).toEqual({
      message: 'Maximum number of login attempts exceeded. Please try again later.',
      documentation_url: expect.any(String),
    });
    // Other logins are unaffected; the user's tokens still work; the app can still check them.
    expect((await api('/user', { Authorization: octocat.auth })).status).toBe(200);
    expect((await api('/user', { Authorization: `token ${appToken.token}` })).status).toBe(200);
    expect(
      (await api(`/applications/${app.clientId}/tokens/${appToken.token}`, { Authorization: app.basic }))
        .status,
    ).toBe(200);
  });

  it('does not count checks of invalid tokens: the check endpoint is exempt', async () => {
    const app = await createApp(stack.endpointsFile, 'octocat', 'Prober');
    for (let i = 0; i < 15; i++) {
      expect(
        (
          await api(`/applications/${app.clientId}/tokens/gho_${String(i).padStart(36, '0')}`, {
            Authorization: app.basic,
          })
        ).status,
      ).toBe(404);
    }
    const token = await json(
      await api(
        '/authorizations',
        { Authorization: octocat.auth },
        {
          method: 'POST',
          body: JSON.stringify({ note: 'probe', client_id: app.clientId, client_secret: app.clientSecret }),
        },
      ),
    );
    expect(
      (await api(`/applications/${app.clientId}/tokens/${token.token}`, { Authorization: app.basic })).status,
    ).toBe(200);
  });
});
