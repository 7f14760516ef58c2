import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '#data/client';
import { API_PREFIX, pathParameterNames, ROUTES, type Route } from '#shared/routes';
import { createApp, createUser, personalToken } from '#test/fixtures';
import { basicAuth, json, startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/**
 * Over-long and malformed identifiers are refused by shape, before authentication and before any
 * DynamoDB call (which would otherwise fail on its 2048-byte key limit and answer 500).
 */
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let origin: string;
let samples: Record<string, string>;
let app: Awaited<ReturnType<typeof createApp>>;
const calls: string[] = [];
const LONG = 'a'.repeat(3000);

const RECORDER = 'long-identifiers-test-recorder';

beforeAll(async () => {
  stack = await startTestStack();
  origin = new URL(stack.baseUrl).origin;
  const user = await createUser(stack.endpointsFile, 'longid');
  app = await createApp(stack.endpointsFile, 'longid');
  const { token } = await personalToken(stack.baseUrl, user.auth, ['repo']);
  samples = {
    login: 'longid',
    owner: 'longid',
    repo: 'somerepo',
    client_id: app.clientId,
    access_token: token,
    fingerprint: 'fp',
    grant_id: '1',
    authorization_id: '1',
    key_id: '1',
    author_id: '1',
    batch_id: '1',
    hook_id: '1',
    delivery_id: '1',
    oid: 'a'.repeat(64),
  };
  // The handlers run in this process and share its DocumentClient: record every call they make.
  db().middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: RECORDER },
  );
});
afterAll(async () => {
  db().middlewareStack.remove(RECORDER);
  await stack?.stop();
});

/** The route's path with each parameter set to its sample, or `override` for the one named. */
const pathOf = (route: Route, override?: [string, string]) =>
  route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(name === override?.[0] ? override[1] : (samples[name] ?? '')),
  );

/** Sends one request and returns its status, body and the DynamoDB calls it caused. */
async function send(path: string, init: RequestInit = {}) {
  calls.length = 0;
  const response = await fetch(`${origin}${path}`, { redirect: 'manual', ...init });
  const text = await response.text();
  return { status: response.status, text, calls: [...calls] };
}

const bodyFor = (route: Route) => (['POST', 'PUT', 'PATCH'].includes(route.method) ? '{}' : undefined);
const api = ROUTES.filter((route) => route.media === 'json');
const withParameters = ROUTES.flatMap((route) =>
  pathParameterNames(route.path).map(
    (name) => [`${route.method} ${route.path} {${name}}`, route, name] as const,
  ),
);

describe('over-long identifiers', () => {
  it.each(withParameters)('%s of 3,000 characters is 404 without a DynamoDB call', async (_, route, name) => {
    const result = await send(pathOf(route, [name, LONG]), {
      method: route.method,
      headers: route.auth === 'app' ? { Authorization: app.basic } : {},
      ...(bodyFor(route) ? { body: bodyFor(route) } : {}),
    });
    expect(result.status).toBe(404);
    expect(result.calls).toEqual([]);
    if (route.media === 'json') expect(JSON.parse(result.text).message).toBe('Not Found');
  });

  it.each(api.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s with a 3,000-character Basic username is refused without a DynamoDB call',
    async (_, route) => {
      const result = await send(pathOf(route), {
        method: route.method,
        headers: {
          Authorization: basicAuth(LONG, 'some-password-1'),
          // Preview routes answer a missing preview media type first (415), before credentials.
          ...(route.preview ? { Accept: `application/vnd.github.${route.preview}-preview` } : {}),
        },
        ...(bodyFor(route) ? { body: bodyFor(route) } : {}),
      });
      // Application routes hide which client ids exist (404); every other route says 401.
      expect(result.status).toBe(route.auth === 'app' ? 404 : 401);
      expect(JSON.parse(result.text).message).toBe(route.auth === 'app' ? 'Not Found' : 'Bad credentials');
      expect(result.calls).toEqual([]);
    },
  );

  it('refuses a 3,000-character client_id query parameter on the application routes with 404', async () => {
    for (const route of api.filter((candidate) => candidate.auth === 'app')) {
      const query = `?client_id=${LONG}&client_secret=${'0'.repeat(40)}`;
      const result = await send(`${pathOf(route)}${query}`, { method: route.method });
      expect(result.status, route.handler).toBe(404);
      expect(result.calls, route.handler).toEqual([]);
    }
  });

  it('refuses a 3,000-character login or password on the web login form as a wrong password', async () => {
    const browser = new WebClient(origin);
    await browser.get('/login');
    for (const fields of [
      { login: LONG, password: 'some-password-1' },
      { login: 'longid', password: 'p'.repeat(3000) },
      { login: '\u212Aate', password: 'some-password-1' },
    ]) {
      calls.length = 0;
      const response = await browser.post('/login', fields);
      expect(response.status).toBe(401);
      expect(await response.text()).toContain('Incorrect username or password.');
      expect(calls).toEqual([]);
    }
  });

  it('refuses the same over-long login and password at sign-up, so every account can sign in', async () => {
    const browser = new WebClient(origin);
    await browser.get('/signup');
    for (const fields of [
      { login: LONG, email: 'long@example.com', password: 'some-password-1' },
      { login: 'longpassword', email: 'long@example.com', password: `p1${'p'.repeat(1023)}` },
    ]) {
      calls.length = 0;
      const response = await browser.post('/signup', fields);
      expect(response.status).toBe(422);
      expect(calls.filter((call) => call !== 'GetCommand')).toEqual([]);
    }
    // 1024 characters is still a password, at sign-up and at sign-in.
    const password = `p1${'p'.repeat(1022)}`;
    await browser.get('/signup');
    expect(
      (await browser.post('/signup', { login: 'longpassword', email: 'lp@example.com', password })).status,
    ).toBe(303);
    const signIn = new WebClient(origin);
    await signIn.get('/login');
    expect((await signIn.post('/login', { login: 'longpassword', password })).status).toBe(303);
  });

  it('still answers well-formed requests as before (the samples are valid)', async () => {
    const result = await send(`${API_PREFIX}/users/longid`);
    expect(result.status).toBe(200);
    expect((await json(new Response(result.text))).login).toBe('longid');
  });
});
