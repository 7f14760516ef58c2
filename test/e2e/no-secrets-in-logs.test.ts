import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '#shared/config';

/**
 * Every log line (and metric line) the service writes during an end-to-end pass, at debug level,
 * is searched for every secret the pass handed out or sent: passwords, tokens, client secrets,
 * authorization codes, session cookies and CSRF tokens.
 */
process.env[ENV.logLevel] = 'debug';

const captured: string[] = [];
const originals = { stdout: process.stdout.write, stderr: process.stderr.write };
function capture(stream: NodeJS.WriteStream, original: typeof process.stdout.write) {
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    return (original as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
  }) as typeof stream.write;
}

// Imported after LOG_LEVEL is set: the logger reads its level once, when the handlers load.
const { basicAuth, json, startTestStack } = await import('#test/stack');
const { createApp, createUser, personalToken } = await import('#test/fixtures');
const { WebClient } = await import('#test/web-client');

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
const secrets = new Map<string, string>();

beforeAll(async () => {
  capture(process.stdout, originals.stdout);
  capture(process.stderr, originals.stderr);
  stack = await startTestStack();
});

afterAll(async () => {
  await stack?.stop();
  process.stdout.write = originals.stdout;
  process.stderr.write = originals.stderr;
});

describe('logs of an end-to-end pass at debug level', () => {
  it('carry no password, token, client secret, code or cookie', async () => {
    const user = await createUser(stack.endpointsFile, 'logcheck', 'log-check-password-1');
    secrets.set('password', user.password);
    const app = await createApp(stack.endpointsFile, 'logcheck', 'Log App', 'https://app.example/cb');
    secrets.set('client secret', app.clientSecret);

    // Password sign-in on the web, then consent: a session cookie, CSRF tokens and a code.
    const browser = new WebClient(stack.webUrl);
    await browser.get('/login');
    secrets.set('login CSRF token', browser.csrf());
    const signIn = await browser.post('/login', { login: user.login, password: user.password });
    expect(signIn.status).toBe(303);
    for (const name of ['session', 'csrf']) secrets.set(`${name} cookie`, browser.cookie(name) ?? '');
    expect(secrets.get('session cookie')).not.toBe('');
    const authorize = `/login/oauth/authorize?${new URLSearchParams({ client_id: app.clientId, scope: 'repo' })}`;
    expect((await browser.get(authorize)).status).toBe(200);
    const fields = Object.fromEntries(
      [...browser.lastHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
        m[1] ?? '',
        m[2] ?? '',
      ]),
    );
    secrets.set('consent CSRF token', fields._csrf ?? '');
    const { _csrf: _, ...hidden } = fields;
    const consent = await browser.post('/login/oauth/authorize', {
      ...hidden,
      granted_scope: 'repo',
      decision: 'authorize',
    });
    expect(consent.status).toBe(303);
    const code = new URL(consent.headers.get('location') ?? '').searchParams.get('code') ?? '';
    expect(code).not.toBe('');
    secrets.set('authorization code', code);

    // Code exchange: an OAuth token.
    const exchanged = await fetch(`${stack.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, code }),
    });
    expect(exchanged.status).toBe(200);
    const oauthToken = (await json(exchanged)).access_token as string;
    secrets.set('OAuth token', oauthToken);
    // The same code again fails (and revokes that token).
    const replay = await fetch(`${stack.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, code }),
    });
    expect((await json(replay)).error).toBe('bad_verification_code');

    // A personal token over the API, and a request with it.
    const personal = await personalToken(stack.baseUrl, user.auth, ['repo']);
    secrets.set('personal token', personal.token);
    expect(
      (await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${personal.token}` } }))
        .status,
    ).toBe(200);

    // A wrong password: a failed login.
    const wrongPassword = 'wrong-password-for-log-1';
    secrets.set('wrong password', wrongPassword);
    const refused = await fetch(`${stack.baseUrl}/authorizations`, {
      headers: { Authorization: basicAuth(user.login, wrongPassword) },
    });
    expect(refused.status).toBe(401);

    // The app-side check of a token, good and unknown.
    const checked = await fetch(`${stack.baseUrl}/applications/${app.clientId}/tokens/${personal.token}`, {
      headers: { Authorization: app.basic },
    });
    expect([200, 404]).toContain(checked.status);
    const unknownToken = 'gho_000000000000000000000000000000000000';
    const unknown = await fetch(`${stack.baseUrl}/applications/${app.clientId}/tokens/${unknownToken}`, {
      headers: { Authorization: app.basic },
    });
    expect(unknown.status).toBe(404);
    // The same with the token in the body (2020), and a report of leaked tokens (which revokes one).
    const checkedInBody = await fetch(`${stack.baseUrl}/applications/${app.clientId}/token`, {
      method: 'POST',
      headers: { Authorization: app.basic },
      body: JSON.stringify({ access_token: oauthToken }),
    });
    expect([200, 404]).toContain(checkedInBody.status);
    const reported = await fetch(`${stack.baseUrl}/credentials/revoke`, {
      method: 'POST',
      body: JSON.stringify({ credentials: [personal.token, oauthToken, unknownToken] }),
    });
    expect(reported.status).toBe(202);

    // The capture works and the service logged at debug level, with correlation ids, and counted.
    const output = captured.join('');
    expect(output).toMatch(/"level":"DEBUG","message":"request"/);
    expect(output).toMatch(/"correlation_id":"[0-9a-f-]{36}"/);
    for (const signal of ['LoginFailed', 'CodeExchangeSucceeded', 'CodeExchangeFailed', 'TokenCheckFailed'])
      expect(output, signal).toContain(`"${signal}"`);

    const leaked = [...secrets].filter(([, secret]) => secret.length >= 8 && output.includes(secret));
    expect(leaked.map(([what]) => what)).toEqual([]);
    expect(secrets.size).toBeGreaterThanOrEqual(9);
  });
});
