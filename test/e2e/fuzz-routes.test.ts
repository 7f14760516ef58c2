import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathParameterNames, ROUTES, type Route } from '#shared/routes';
import { createApp, createUser, personalToken } from '#test/fixtures';
import { startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/**
 * Malformed requests to every route of the route table (API and site): paths, query strings,
 * headers and bodies an attacker would try, sent with working credentials so that they reach the
 * handlers. Any 5xx fails. Deterministic: every random choice comes from one seeded generator.
 */
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let port: number;
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** mulberry32: small, fast and good enough to vary the inputs reproducibly. */
function seeded(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T };
}
const random = seeded(0x5eed);

interface Sent {
  readonly method: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}
interface Received {
  readonly status: number;
  readonly body: string;
}

/** Raw HTTP, so that paths go out exactly as written (no `..` or `%` normalisation). */
function send({ method, path, headers = {}, body }: Sent): Promise<Received> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: body === undefined ? headers : { ...headers, 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

// ---- What is sent ------------------------------------------------------------------------

const LONG = 'a'.repeat(3000);
const HUGE = 'x'.repeat(900 * 1024); // within the 1 MiB body limit

/** Raw (already percent-encoded where needed) values for one path segment. */
const SEGMENTS = [
  LONG,
  encodeURIComponent('ü'.repeat(50)),
  encodeURIComponent('😀'),
  encodeURIComponent('\u212Aate'),
  '%00',
  'a%00b',
  '..',
  '%2e%2e',
  '.',
  '%2F',
  'a%2Fb',
  '99999999999999999999999',
  '-1',
  '0',
  '1e308',
  'NaN',
  '%',
  '%zz',
  "'%20OR%201=1",
  encodeURIComponent('<script>'),
];

const QUERIES = [
  `?client_id=${LONG}&client_secret=${LONG}`,
  `?access_token=${LONG}`,
  '?page=-1&per_page=99999999999999999999',
  '?page=abc&per_page=1e9',
  '?page=0&per_page=0',
  `?state=${LONG}&scope=${LONG}&redirect_uri=${LONG}`,
  '?client_id=%00&redirect_uri=%00&scope=%00',
  '?return_to=//evil.example/x&notice=%00',
  `?return_to=${LONG}&notice=${LONG}`,
  '?code_challenge=%F0%9F%98%80&code_challenge_method=plain&response_type=token',
  '?a=1&a=2&client_id=1&client_id=2',
  '?%=%&&==&',
];

const fuzzHeaders = (base: Record<string, string>): Record<string, string>[] => [
  { ...base, Authorization: `Basic ${'A'.repeat(8000)}` },
  { ...base, Authorization: 'Basic !!!not-base64!!!' },
  { ...base, Authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` },
  { ...base, Authorization: `Basic ${Buffer.from(`${LONG}:${LONG}`).toString('base64')}` },
  { ...base, Authorization: `Basic ${Buffer.from(':').toString('base64')}` },
  { ...base, Authorization: `token ${'t'.repeat(4000)}` },
  { ...base, Authorization: 'Bearer' },
  { ...base, Authorization: 'Digest x=y' },
  { ...base, Cookie: `session=${'s'.repeat(8000)}` },
  { ...base, Cookie: `${'c'.repeat(3000)}=1; session=%00; csrf=${LONG}` },
  { ...base, Cookie: ';;;=;=%;session' },
  { ...base, 'X-GitHub-OTP': LONG, Accept: LONG },
  {
    ...base,
    'Content-Type': 'application/json; charset=ebcdic',
    Accept: 'application/vnd.github.v3+xml;q=abc',
  },
];

/** A value of a random wrong type or shape. */
function wrongValue(): unknown {
  return random.pick<() => unknown>([
    () => 123,
    () => -1,
    () => 1e308,
    () => true,
    () => null,
    () => [],
    () => ['a', 1, null, {}],
    () => ({}),
    () => ({ nested: { deeper: [1, 2, 3] } }),
    () => LONG,
    () => '\u0000',
    () => 'ü😀\u212A',
    () => Array.from({ length: 200 }, () => LONG.slice(0, 100)),
  ])();
}

const FIELDS = [
  'note',
  'note_url',
  'scopes',
  'add_scopes',
  'remove_scopes',
  'fingerprint',
  'client_id',
  'client_secret',
  'name',
  'description',
  'homepage',
  'private',
  'key',
  'title',
  'read_only',
  'login',
  'password',
  'email',
  'url',
  'callback_url',
  'otp',
  'decision',
  'granted_scope',
  'return_to',
  'code',
  'redirect_uri',
  'state',
  'code_verifier',
  'grant_type',
  'vcs_url',
  'vcs',
  'vcs_username',
  'vcs_password',
  'tfvc_project',
  'human_name',
  'use_lfs',
];

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

function jsonBodies(): string[] {
  const bodies = [
    '{',
    '{"note":',
    'not json',
    '[]',
    'null',
    '"a string"',
    '123',
    '{"__proto__":{"admin":true},"constructor":{"prototype":{}}}',
    nested(5000),
    `{"a":${nested(100000)}}`,
    '\u0000',
  ];
  for (let i = 0; i < 6; i++) {
    const body: Record<string, unknown> = {};
    for (const field of FIELDS) if (random.next() < 0.4) body[field] = wrongValue();
    bodies.push(JSON.stringify(body));
  }
  for (const field of [
    'note',
    'description',
    'key',
    'title',
    'name',
    'fingerprint',
    'note_url',
    'homepage',
    'vcs_url',
    'vcs_password',
    'human_name',
  ])
    bodies.push(JSON.stringify({ [field]: HUGE }));
  bodies.push(JSON.stringify({ scopes: Array.from({ length: 5000 }, (_, n) => `s${n}`) }));
  return bodies;
}

function formBodies(csrf: string): string[] {
  const form = (fields: Record<string, string>) => new URLSearchParams({ _csrf: csrf, ...fields }).toString();
  const bodies = [
    `_csrf=${encodeURIComponent(csrf)}&%=%&&==`,
    `_csrf=${encodeURIComponent(csrf)}&login=%00&password=%FF%FE`,
    form(Object.fromEntries(FIELDS.map((field) => [field, LONG]))),
    form({ scopes: HUGE.slice(0, 200_000) }),
    `_csrf=${encodeURIComponent(csrf)}&${Array.from({ length: 3000 }, (_, n) => `scopes=s${n}`).join('&')}`,
  ];
  for (let i = 0; i < 4; i++) {
    const fields: Record<string, string> = {};
    for (const field of FIELDS) if (random.next() < 0.4) fields[field] = String(wrongValue());
    bodies.push(form(fields));
  }
  for (const field of [
    'login',
    'password',
    'email',
    'note',
    'name',
    'url',
    'callback_url',
    'otp',
    'return_to',
  ])
    bodies.push(form({ [field]: HUGE.slice(0, 300_000) }));
  return bodies;
}

// ---- Credentials that reach the handlers --------------------------------------------------

let samples: Record<string, string>;
let userBasic: string;
let userToken: string;
let appBasic: string;
let appSecret: string;

async function webSession(): Promise<{ cookie: string; csrf: string }> {
  const browser = new WebClient(`http://127.0.0.1:${port}`);
  await browser.get('/login');
  await browser.post('/login', { login: 'fuzzer', password: 'fuzzer-pass-1' });
  await browser.get('/settings/tokens');
  const cookies = ['session', 'csrf', '__Host-session', '__Host-csrf']
    .map((name) => [name, browser.cookie(name)] as const)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${value}`);
  return { cookie: cookies.join('; '), csrf: browser.csrf() };
}

function credentials(route: Route): Record<string, string> {
  switch (route.auth) {
    case 'app':
      return { Authorization: appBasic };
    case 'password':
      return { Authorization: userBasic };
    case 'user':
    case 'none':
    case 'lfs-action':
      return { Authorization: `token ${userToken}` };
    case 'bearer':
      // The MCP endpoint: the token, and the media types Streamable HTTP asks a client to accept.
      return {
        Authorization: `Bearer ${userToken}`,
        Accept: 'application/json, text/event-stream',
        'Content-Type': 'application/json',
      };
    default:
      return {};
  }
}

const pathWith = (route: Route, override?: [string, string]) =>
  route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === override?.[0] ? override[1] : encodeURIComponent(samples[name] ?? 'x'),
  );

beforeAll(async () => {
  stack = await startTestStack({
    importStateMachine: {
      name: 'Import',
      definitionFile: fileURLToPath(new URL('../fixtures/import-idle.asl.json', import.meta.url)),
      tasks: {},
    },
  });
  port = Number(new URL(stack.baseUrl).port);
  const user = await createUser(stack.endpointsFile, 'fuzzer');
  const app = await createApp(stack.endpointsFile, 'fuzzer', 'Fuzzed');
  userBasic = user.auth;
  appBasic = app.basic;
  appSecret = app.clientSecret;
  userToken = (await personalToken(stack.baseUrl, user.auth, ['repo', 'user', 'admin:public_key'])).token;
  const created = await fetch(`${stack.baseUrl}/authorizations`, {
    method: 'POST',
    headers: { Authorization: user.auth },
    body: JSON.stringify({
      note: 'fuzz app token',
      client_id: app.clientId,
      client_secret: app.clientSecret,
    }),
  });
  const appToken = ((await created.json()) as { token: string }).token;
  await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${userToken}` },
    body: JSON.stringify({ name: 'fuzzed' }),
  });
  // An import, so that the import routes reach their handlers' work (cancel comes last of them).
  await fetch(`${stack.baseUrl}/repos/fuzzer/fuzzed/import`, {
    method: 'PUT',
    headers: { Authorization: `token ${userToken}`, Accept: 'application/vnd.github.barred-rock-preview' },
    body: JSON.stringify({ vcs_url: 'http://127.0.0.1:9/origin.git' }),
  });
  samples = {
    login: 'fuzzer',
    owner: 'fuzzer',
    repo: 'fuzzed',
    client_id: app.clientId,
    access_token: appToken,
    fingerprint: 'fp',
    grant_id: '1',
    authorization_id: '1',
    key_id: '1',
    oid: 'a'.repeat(64),
    author_id: '1',
    hook_id: '1',
    delivery_id: '1',
  };
}, 60_000);
afterAll(async () => {
  agent.destroy();
  await stack?.stop();
});

/** Sends every request of a route and returns those answered with a 5xx. */
async function serverErrors(requests: Sent[]): Promise<string[]> {
  const failures: string[] = [];
  for (let i = 0; i < requests.length; i += 4) {
    const batch = requests.slice(i, i + 4);
    const results = await Promise.all(batch.map(send));
    results.forEach((result, n) => {
      const sent = batch[n] as Sent;
      if (result.status >= 500)
        failures.push(
          `${sent.method} ${sent.path.slice(0, 120)} [${JSON.stringify(sent.headers ?? {}).slice(0, 80)}] body ${(sent.body ?? '').slice(0, 60)} → ${result.status} ${result.body.slice(0, 120)}`,
        );
    });
  }
  return failures;
}

describe('fuzzing every route', () => {
  it.each(ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s never answers 5xx',
    async (_, route) => {
      const site = route.media !== 'json' && route.media !== 'mcp';
      const session = site ? await webSession() : undefined;
      const base: Record<string, string> = {
        ...credentials(route),
        ...(route.preview ? { Accept: `application/vnd.github.${route.preview}-preview` } : {}),
        ...(session ? { Cookie: session.cookie } : {}),
      };
      const requests: Sent[] = [];
      const withBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method);
      const formHeaders = { ...base, 'Content-Type': 'application/x-www-form-urlencoded' };
      const validBody = session
        ? new URLSearchParams({ _csrf: session.csrf }).toString()
        : route.auth === 'client'
          ? new URLSearchParams({ client_id: samples.client_id ?? '', client_secret: appSecret }).toString()
          : '{}';
      const plain = (path: string, headers = base): Sent => ({
        method: route.method,
        path,
        headers:
          site || route.auth === 'client'
            ? { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' }
            : headers,
        ...(withBody ? { body: validBody } : {}),
      });

      for (const name of pathParameterNames(route.path))
        for (const segment of SEGMENTS) requests.push(plain(pathWith(route, [name, segment])));
      for (const query of QUERIES) requests.push(plain(`${pathWith(route)}${query}`));
      for (const headers of fuzzHeaders(base)) requests.push(plain(pathWith(route), headers));
      if (withBody) {
        const bodies = site || route.auth === 'client' ? formBodies(session?.csrf ?? '') : jsonBodies();
        for (const body of bodies)
          requests.push({
            method: route.method,
            path: pathWith(route),
            headers: site || route.auth === 'client' ? formHeaders : base,
            body,
          });
        if (!site)
          for (const body of jsonBodies().slice(0, 10))
            requests.push({
              method: route.method,
              path: pathWith(route),
              headers: { ...base, 'Content-Type': 'application/json' },
              body,
            });
      }

      expect(await serverErrors(requests)).toEqual([]);
    },
    60_000,
  );
});
