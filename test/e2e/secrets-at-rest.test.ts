import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDynamoDbClient } from '#local/dynamodb-local';
import { createApp, createUser, enableOtp } from '#test/fixtures';
import { basicAuth, json, startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/**
 * Secrets at rest: after an end-to-end pass through everything that hands out a secret (passwords,
 * a TOTP seed, browser sessions, personal and OAuth tokens, reset and regenerated tokens, client
 * secrets, authorization codes exchanged or not, an import's origin password), no item of the table holds any of them,
 * anywhere: only hashes (and a token's last eight characters) may be stored.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;

const CALLBACK = 'https://app.example/callback';
/** Every secret the service handed out during the run, by what it is. */
const secrets = new Map<string, string>();
let seed = '';
const items: Record<string, unknown>[] = [];

const keep = (what: string, value: string | undefined | null): string => {
  expect(value, what).toBeTruthy();
  secrets.set(what, value ?? '');
  return value ?? '';
};

const api = (path: string, init: RequestInit = {}) => fetch(`${stack.baseUrl}${path}`, init);
const secretFrom = (page: string) => /<dd class="secret"><code>([^<]+)<\/code><\/dd>/.exec(page)?.[1];
const unescapeHtml = (text: string) =>
  text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, entity: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[entity] ?? '',
  );

/** Opens the authorize page and, when it asks, approves every requested scope; returns the code. */
async function authorize(browser: WebClient, clientId: string, scope: string): Promise<string> {
  const path = `/login/oauth/authorize?${new URLSearchParams({ client_id: clientId, scope, state: 's' })}`;
  let response = await browser.get(path);
  if (response.status === 200) {
    const fields: Record<string, string | string[]> = { decision: 'authorize' };
    for (const match of browser.lastHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      if (match[1] !== '_csrf') fields[match[1] ?? ''] = unescapeHtml(match[2] ?? '');
    fields.granted_scope = [
      ...browser.lastHtml.matchAll(/<input type="checkbox" name="granted_scope" value="([^"]+)" checked/g),
    ].map((m) => m[1] ?? '');
    response = await browser.post('/login/oauth/authorize', fields);
  }
  expect([302, 303]).toContain(response.status);
  return new URL(response.headers.get('location') ?? '').searchParams.get('code') ?? '';
}

async function exchange(app: { clientId: string; clientSecret: string }, code: string): Promise<string> {
  const response = await fetch(`${stack.webUrl}/login/oauth/access_token`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, code }),
  });
  const body = await json(response);
  expect(body.access_token, JSON.stringify(body)).toMatch(/^gho_/);
  return body.access_token;
}

/** Every string in a stored item, attribute names and set members included, however deep. */
function* stringsIn(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (value instanceof Uint8Array) yield Buffer.from(value).toString('latin1');
  else if (value instanceof Set || Array.isArray(value)) for (const v of value) yield* stringsIn(v);
  else if (value && typeof value === 'object')
    for (const [name, v] of Object.entries(value)) {
      yield name;
      yield* stringsIn(v);
    }
  else if (value !== null && value !== undefined) yield String(value);
}

/** `what: PK|SK` for each stored item that contains one of `values`. */
function findings(values: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const item of items)
    for (const text of stringsIn(item))
      for (const [what, secret] of values)
        if (text.includes(secret)) found.push(`${what} in ${String(item.PK)}|${String(item.SK)}`);
  return found;
}

beforeAll(async () => {
  stack = await startTestStack();

  // A user with two-factor authentication who signs in in a browser; a password-only user for
  // the Basic-authenticated API (every Basic request of a two-factor user would spend a TOTP step).
  const alice = await createUser(stack.endpointsFile, 'alice', 'alice-password-1');
  keep('password of alice', alice.password);
  const otp = await enableOtp(stack.endpointsFile, 'alice');
  seed = otp.secret;
  const bob = await createUser(stack.endpointsFile, 'bob', 'bob-password-12');
  keep('password of bob', bob.password);

  const browser = new WebClient(stack.webUrl);
  await browser.get('/login');
  expect((await browser.post('/login', { login: 'alice', password: alice.password })).status).toBe(303);
  await browser.get('/login/two-factor');
  expect((await browser.post('/login/two-factor', { otp: otp.code() })).status).toBe(303);
  keep('session cookie', browser.cookie('session'));

  // Personal token over the API.
  const personal = await api('/authorizations', {
    method: 'POST',
    headers: { Authorization: bob.auth },
    body: JSON.stringify({ scopes: ['gist'], note: 'personal' }),
  });
  expect(personal.status).toBe(201);
  keep('personal token (API)', (await json(personal)).token);

  // An application registered on the developer settings page, then its secret rotated.
  await browser.get('/settings/developers');
  expect(
    (
      await browser.post('/settings/developers', {
        name: 'Tool',
        url: 'https://app.example',
        callback_url: CALLBACK,
      })
    ).status,
  ).toBe(200);
  const clientId =
    /<dt>Client ID<\/dt><dd><code>([0-9a-f]{20})<\/code><\/dd>/.exec(browser.lastHtml)?.[1] ?? '';
  keep('first client secret', secretFrom(browser.lastHtml));
  expect((await browser.post(`/settings/developers/${clientId}/secret`, {})).status).toBe(200);
  const app = { clientId, clientSecret: keep('client secret', secretFrom(browser.lastHtml)) };
  const cliApp = await createApp(stack.endpointsFile, 'bob', 'CLI App', CALLBACK);
  keep('client secret (CLI)', cliApp.clientSecret);

  // Get-or-create for the application.
  const created = await api(`/authorizations/clients/${app.clientId}`, {
    method: 'PUT',
    headers: { Authorization: bob.auth },
    body: JSON.stringify({ client_secret: app.clientSecret, scopes: ['repo'] }),
  });
  expect(created.status).toBe(201);
  const getOrCreateToken = keep('get-or-create token', (await json(created)).token);

  // Web flow: one code exchanged, one left unexchanged.
  const code = keep('exchanged code', await authorize(browser, app.clientId, 'user'));
  const webToken = keep('web-flow token', await exchange(app, code));
  keep('unexchanged code', await authorize(browser, app.clientId, 'user'));

  // Application side: check, then reset (twice: the reset token itself is reset).
  const appBasic = basicAuth(app.clientId, app.clientSecret);
  expect(
    (await api(`/applications/${app.clientId}/tokens/${webToken}`, { headers: { Authorization: appBasic } }))
      .status,
  ).toBe(200);
  const reset = await api(`/applications/${app.clientId}/tokens/${getOrCreateToken}`, {
    method: 'POST',
    headers: { Authorization: appBasic },
  });
  expect(reset.status).toBe(200);
  const resetToken = keep('reset token', (await json(reset)).token);
  const again = await api(`/applications/${app.clientId}/tokens/${resetToken}`, {
    method: 'POST',
    headers: { Authorization: appBasic },
  });
  keep('reset token, reset again', (await json(again)).token);

  // Settings: a personal token made on the page, then regenerated.
  await browser.get('/settings/tokens');
  expect((await browser.post('/settings/tokens', { note: 'page token', scopes: ['gist'] })).status).toBe(200);
  keep('personal token (settings)', secretFrom(browser.lastHtml));
  const id = [...browser.lastHtml.matchAll(/action="\/settings\/tokens\/(\d+)\/regenerate"/g)].at(0)?.[1];
  expect((await browser.post(`/settings/tokens/${id}/regenerate`, {})).status).toBe(200);
  keep('regenerated token', secretFrom(browser.lastHtml));

  // A second browser session, still open.
  const bobBrowser = new WebClient(stack.webUrl);
  await bobBrowser.get('/login');
  expect((await bobBrowser.post('/login', { login: 'bob', password: bob.password })).status).toBe(303);
  keep('second session cookie', bobBrowser.cookie('session'));

  // A source import with origin credentials: the API seals them, the workflow opens them.
  const importer = basicAuth('bob', bob.password);
  expect(
    (
      await api('/user/repos', {
        method: 'POST',
        headers: { Authorization: importer },
        body: JSON.stringify({ name: 'imported' }),
      })
    ).status,
  ).toBe(201);
  const started = await api('/repos/bob/imported/import', {
    method: 'PUT',
    headers: { Authorization: importer, Accept: 'application/vnd.github.barred-rock-preview' },
    body: JSON.stringify({
      vcs_url: 'http://127.0.0.1:9/origin.git',
      vcs: 'git',
      vcs_username: 'origin-user',
      vcs_password: keep('import origin password', 'origin-Secret-0e3a7c9b41'),
    }),
  });
  expect(started.status).toBe(201);

  const documents = DynamoDBDocumentClient.from(localDynamoDbClient(stack.dynamodbEndpoint));
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new ScanCommand({ TableName: stack.tableName, ConsistentRead: true, ExclusiveStartKey: startKey }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

describe('the table after an end-to-end run', () => {
  it('was scanned and holds the run (the scan sees what the service wrote)', () => {
    expect(secrets.size).toBe(17);
    expect(items.some((item) => item.login === 'alice' && item.SK === 'PROFILE')).toBe(true);
  });

  it('holds no password, session, token, client secret or code, in any attribute', () => {
    expect(findings(secrets)).toEqual([]);
  });

  it('holds no TOTP seed in plaintext', () => {
    expect(seed).toMatch(/^[A-Z2-7]+=*$/);
    expect(findings(new Map([['TOTP seed', seed]]))).toEqual([]);
  });
});
