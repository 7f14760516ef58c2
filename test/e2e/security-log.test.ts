import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, tableName } from '#data/client';
import { userPartition } from '#data/keys';
import { type RecordedEvent, recordedEvents } from '#local/event-bus';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { SECURITY_EVENT_SOURCE } from '#shared/security-events';
import { admin } from '#test/admin';
import { createApp, createUser, enableOtp, personalToken } from '#test/fixtures';
import { importApiCall } from '#test/import-api';
import { basicAuth, json, startTestStack } from '#test/stack';
import { authorizedCode, signedIn, WebClient } from '#test/web-client';

/*
 * The security log (issue 38, item 3) through the public interface: each action done over HTTP as
 * a client does it (the login form, Basic, the settings pages, the API, the OAuth web flow, the
 * import API with an application's token), then the log read through `GET /user/security-log`,
 * and the same events read from the EventBridge stand-in. The page is checked in Chromium in
 * security-log-browser.test.ts.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
// biome-ignore lint/suspicious/noExplicitAny: log entries are asserted field by field
type Entry = any;

let stack: Stack;
let origin: OriginServer;
let mona: Awaited<ReturnType<typeof createUser>>;
let other: Awaited<ReturnType<typeof createUser>>;
let app: Awaited<ReturnType<typeof createApp>>;
const started = new Date();

/** Every entry of a user's log, following the `Link` header's `next` pages of `perPage`. */
async function wholeLog(auth: string, perPage = 100, otp?: string): Promise<Entry[]> {
  const entries: Entry[] = [];
  let url: string | undefined = `${stack.baseUrl}/user/security-log?per_page=${perPage}`;
  while (url) {
    const response = await fetch(url, {
      headers: { Authorization: auth, ...(otp ? { 'X-GitHub-OTP': otp } : {}) },
    });
    expect(response.status).toBe(200);
    entries.push(...(await json(response)));
    url = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
  }
  return entries;
}

const ofAction = (entries: Entry[], action: string) => entries.filter((entry) => entry.action === action);

/** The security events on the local bus for `login`. */
async function busEvents(login: string): Promise<RecordedEvent[]> {
  return (await recordedEvents(stack.eventsFile)).filter(
    (event) => event.source === SECURITY_EVENT_SOURCE && event.detail.user === login,
  );
}

/** The import's status once it is no longer moving. */
async function settledImport(token: string, repo: string): Promise<Entry> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const { body } = await importApiCall(stack.baseUrl, token, 'GET', `/repos/mona/${repo}/import`);
    if (['complete', 'error', 'auth_failed'].includes(body.status) || Date.now() > deadline) return body;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  stack = await startTestStack();
  const root = await mkdtemp(join(tmpdir(), 'seclog-origin-'));
  await makeFixtureRepository(join(root, 'small.git'), { commits: 3, branches: 1, annotatedTags: 0 });
  origin = await serveGitHttp(root);
  mona = await createUser(stack.endpointsFile, 'mona');
  other = await createUser(stack.endpointsFile, 'other');
  await createUser(stack.endpointsFile, 'devowner');
  app = await createApp(stack.endpointsFile, 'devowner', 'Migration Agent');
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await origin?.close();
});

describe('sign-in', () => {
  it('records a web sign-in with the address and user agent, and failed sign-ins of the form and of Basic, counted', async () => {
    await signedIn(stack.webUrl, mona);
    const form = new WebClient(stack.webUrl);
    await form.get('/login');
    expect((await form.post('/login', { login: 'mona', password: 'wrong-password-1' })).status).toBe(401);
    for (let n = 0; n < 2; n++) {
      const basic = await fetch(`${stack.baseUrl}/user`, {
        headers: { Authorization: basicAuth('mona', 'wrong-password-2'), 'User-Agent': 'guesser/1.0' },
      });
      expect(basic.status).toBe(401);
    }
    // An unknown login has no log to write to.
    await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: basicAuth('nobody', 'x-password-1') } });

    const log = await wholeLog(mona.auth);
    const [login] = ofAction(log, 'user.login');
    expect(login).toMatchObject({
      user: 'mona',
      actor: 'mona',
      actor_type: 'User',
      actor_ip: expect.stringMatching(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/),
      detail: 'web',
    });
    expect(Date.parse(login.created_at)).toBeGreaterThanOrEqual(started.getTime() - 1000);
    expect(login['@timestamp']).toBe(Date.parse(login.created_at));
    // One item per address and minute: three failures in one or two items (a minute may turn).
    const failed = ofAction(log, 'user.failed_login');
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed.length).toBeLessThanOrEqual(2);
    expect(failed.reduce((sum: number, entry: Entry) => sum + entry.count, 0)).toBe(3);
    expect(failed[0]).toMatchObject({ actor: null, actor_type: 'anonymous', detail: 'password' });
    // Each failure is its own event on the bus.
    const bus = (await busEvents('mona')).filter((event) => event.detail.action === 'user.failed_login');
    expect(bus).toHaveLength(3);
    expect(new Set(bus.map((event) => event.detail.event_id)).size).toBe(3);
    expect(bus.some((event) => event.detail.user_agent === 'guesser/1.0')).toBe(true);
  });

  it('records two-factor authentication turned on and off by the admin CLI', async () => {
    const hubot = await createUser(stack.endpointsFile, 'hubot');
    const otp = await enableOtp(stack.endpointsFile, 'hubot');
    const log = await wholeLog(hubot.auth, 100, otp.code());
    const [enabled] = ofAction(log, 'two_factor_authentication.enabled');
    expect(enabled).toMatchObject({ user: 'hubot', actor: null, actor_type: 'admin', actor_ip: null });

    const off = await admin(stack.endpointsFile, 'user', 'otp', 'disable', 'hubot');
    expect(off.code, off.stderr).toBe(0);
    // Basic without a one-time code signs in again, and the profile says so.
    const me = await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: hubot.auth } });
    expect(me.status).toBe(200);
    expect((await json(me)).two_factor_authentication).toBe(false);
    const after = await wholeLog(hubot.auth);
    const [disabled] = ofAction(after, 'two_factor_authentication.disabled');
    expect(disabled).toMatchObject({ user: 'hubot', actor: null, actor_type: 'admin', actor_ip: null });
    const bus = (await busEvents('hubot')).map((event) => event.detail.action);
    expect(bus).toEqual(
      expect.arrayContaining(['two_factor_authentication.enabled', 'two_factor_authentication.disabled']),
    );
    // Once off, there is nothing to turn off.
    const again = await admin(stack.endpointsFile, 'user', 'otp', 'disable', 'hubot');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('has no two-factor authentication');
  }, 60_000);
});

describe('tokens', () => {
  it('records tokens created, regenerated and revoked on the settings page and through the API, and one revoked after a report', async () => {
    const made = await personalToken(stack.baseUrl, mona.auth, ['repo'], 'api token');
    const browser = await signedIn(stack.webUrl, mona);
    await browser.get('/settings/tokens');
    expect((await browser.post('/settings/tokens', { note: 'page token', scopes: ['gist'] })).status).toBe(
      200,
    );
    const pageId = /action="\/settings\/tokens\/(\d+)\/regenerate"/.exec(browser.lastHtml)?.[1];
    expect((await browser.post(`/settings/tokens/${pageId}/regenerate`, {})).status).toBe(200);
    expect((await browser.post(`/settings/tokens/${pageId}/delete`, {})).status).toBe(303);
    const deleted = await fetch(`${stack.baseUrl}/authorizations/${made.id}`, {
      method: 'DELETE',
      headers: { Authorization: mona.auth },
    });
    expect(deleted.status).toBe(204);
    const leaked = await personalToken(stack.baseUrl, mona.auth, ['gist'], 'leaked token');
    const report = await fetch(`${stack.baseUrl}/credentials/revoke`, {
      method: 'POST',
      body: JSON.stringify({ credentials: [leaked.token] }),
    });
    expect(report.status).toBe(202);

    const log = await wholeLog(mona.auth);
    const about = (action: string, note: string) =>
      ofAction(log, action).filter((entry: Entry) => entry.token?.note === note);
    expect(about('oauth_access.create', 'api token')).toEqual([
      expect.objectContaining({
        actor: 'mona',
        token: { id: made.id, note: 'api token', last_eight: made.token.slice(-8) },
      }),
    ]);
    expect(about('oauth_access.create', 'page token')).toHaveLength(1);
    expect(about('oauth_access.regenerate', 'page token')).toHaveLength(1);
    expect(about('oauth_access.destroy', 'page token')).toHaveLength(1);
    expect(about('oauth_access.destroy', 'api token')).toHaveLength(1);
    expect(about('oauth_access.revoke_reported', 'leaked token')).toEqual([
      expect.objectContaining({ actor: null, actor_type: 'anonymous', detail: 'personal' }),
    ]);
    // The token itself is never in the log or on the bus.
    const text = JSON.stringify([log, await busEvents('mona')]);
    expect(text).not.toContain(made.token);
    expect(text).not.toContain(leaked.token);
  });
});

describe('an application, and the imports it runs', () => {
  let appToken: string;

  it('records the consent of the web flow, then what the application did with its token, named by its client id', async () => {
    const browser = await signedIn(stack.webUrl, mona);
    const code = await authorizedCode(browser, app.clientId, 'repo');
    const exchange = await fetch(`${stack.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_id: app.clientId, client_secret: app.clientSecret, code }),
    });
    appToken = (await json(exchange)).access_token;
    expect(appToken).toMatch(/^gho_/);
    const api = (method: string, path: string, body?: unknown) =>
      importApiCall(stack.baseUrl, appToken, method, path, body);
    expect((await api('POST', '/user/repos', { name: 'moved' })).status).toBe(201);
    const start = await api('PUT', '/repos/mona/moved/import', {
      vcs_url: `${origin.url}/small.git`,
      vcs: 'git',
    });
    expect(start.status).toBe(201);
    expect((await settledImport(appToken, 'moved')).status).toBe('complete');
    const authors = await api('GET', '/repos/mona/moved/import/authors');
    const author = authors.body[0];
    const mapping = { name: 'Mona Lisa', email: 'mona@example.com' };
    // The same mapping sent twice (a client's retry, once the first rewrite is done): one event.
    for (let n = 0; n < 2; n++) {
      const mapped = await api('PATCH', `/repos/mona/moved/import/authors/${author.id}`, mapping);
      expect(mapped.status, JSON.stringify(mapped.body)).toBe(200);
      expect((await settledImport(appToken, 'moved')).status).toBe('complete');
    }
    // Following asked for twice (a retry), then the cut-over twice: one event each.
    for (let n = 0; n < 2; n++) {
      const follow = await api('PUT', '/repos/mona/moved/import/sync', { interval_minutes: null });
      expect(follow.status, JSON.stringify(follow.body)).toBe(200);
    }
    for (let n = 0; n < 2; n++) {
      const cut = await api('DELETE', '/repos/mona/moved/import/sync');
      expect(cut.status, JSON.stringify(cut.body)).toBe(200);
    }

    const log = await wholeLog(mona.auth);
    const application = { client_id: app.clientId, name: 'Migration Agent' };
    expect(ofAction(log, 'oauth_authorization.create')).toEqual([
      expect.objectContaining({ actor: 'mona', actor_type: 'User', application, detail: 'repo' }),
    ]);
    const byApp = expect.objectContaining({
      actor: 'mona',
      actor_type: 'OauthApplication',
      actor_application: application,
      repository: 'mona/moved',
    });
    expect(ofAction(log, 'repository_import.start')).toEqual([byApp]);
    expect(ofAction(log, 'repository_import.map_author')).toEqual([
      expect.objectContaining({ author: { id: author.id, ...mapping }, actor_application: application }),
    ]);
    expect(ofAction(log, 'repository_import.follow')).toEqual([byApp]);
    expect(ofAction(log, 'repository_import.cut_over')).toEqual([byApp]);
  }, 180_000);

  it('records the application revoked on the settings page and by the application itself', async () => {
    const browser = await signedIn(stack.webUrl, mona);
    await browser.get(`/settings/connections/applications/${app.clientId}`);
    expect((await browser.post(`/settings/connections/applications/${app.clientId}/revoke`, {})).status).toBe(
      303,
    );
    // Authorized again, then revoked by the application (DELETE /applications/{client_id}/grant).
    const code = await authorizedCode(browser, app.clientId, 'repo');
    const exchange = await fetch(`${stack.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_id: app.clientId, client_secret: app.clientSecret, code }),
    });
    const token = (await json(exchange)).access_token;
    const revoked = await fetch(`${stack.baseUrl}/applications/${app.clientId}/grant`, {
      method: 'DELETE',
      headers: { Authorization: app.basic },
      body: JSON.stringify({ access_token: token }),
    });
    expect(revoked.status).toBe(204);

    const destroyed = ofAction(await wholeLog(mona.auth), 'oauth_authorization.destroy');
    expect(destroyed).toHaveLength(2);
    const application = { client_id: app.clientId, name: 'Migration Agent' };
    // Newest first: the application's own revocation, then the person's on the page.
    expect(destroyed[0]).toMatchObject({ actor: 'mona', actor_type: 'OauthApplication', application });
    expect(destroyed[1]).toMatchObject({ actor: 'mona', actor_type: 'User', application });
  });
});

describe('reading the log', () => {
  it('shows each person their own events only, newest first, page by page', async () => {
    await signedIn(stack.webUrl, other);
    const mine = await wholeLog(mona.auth);
    const theirs = await wholeLog(other.auth);
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.every((entry: Entry) => entry.user === 'other')).toBe(true);
    expect(mine.every((entry: Entry) => entry.user === 'mona')).toBe(true);
    const ids = new Set(mine.map((entry: Entry) => entry.id));
    expect(theirs.some((entry: Entry) => ids.has(entry.id))).toBe(false);

    const paged = await wholeLog(mona.auth, 3);
    expect(paged.map((entry: Entry) => entry.id)).toEqual(mine.map((entry: Entry) => entry.id));
    const times = mine.map((entry: Entry) => entry['@timestamp']);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(ids.size).toBe(mine.length);
  });

  it('asks a token for the user scope (404 without it, as GitHub hides what a token may not see), and refuses a forged cursor', async () => {
    const narrow = await personalToken(stack.baseUrl, other.auth, ['gist']);
    const wide = await personalToken(stack.baseUrl, other.auth, ['user']);
    const read = (token: string, query = '') =>
      fetch(`${stack.baseUrl}/user/security-log${query}`, { headers: { Authorization: `token ${token}` } });
    expect((await read(narrow.token)).status).toBe(404);
    expect((await read(wide.token)).status).toBe(200);
    const forged = await read(
      wide.token,
      `?cursor=${Buffer.from('2026-01-01T00:00:00.000Z#x').toString('base64url')}`,
    );
    expect(forged.status).toBe(422);
    expect((await fetch(`${stack.baseUrl}/user/security-log`)).status).toBe(401);
  });

  it('keeps each event 90 days (the TTL attribute) and puts the same events on EventBridge', async () => {
    const { Items = [] } = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': userPartition('mona'), ':prefix': 'SECLOG#' },
      }),
    );
    expect(Items.length).toBeGreaterThan(10);
    for (const item of Items) {
      const days = (Number(item.expiresAt) - Date.parse(String(item.createdAt)) / 1000) / 86_400;
      expect(days).toBeGreaterThan(89.99);
      expect(days).toBeLessThan(90.01);
    }
    const log = await wholeLog(mona.auth);
    const bus = await busEvents('mona');
    expect(bus.every((event) => event['detail-type'] === 'Security Log Event')).toBe(true);
    // Every logged event is on the bus under its own id (failed sign-ins: one per failure).
    const onBus = new Set(bus.map((event) => event.detail.id));
    expect(log.filter((entry: Entry) => !onBus.has(entry.id))).toEqual([]);
    const counted = log.filter((entry: Entry) => entry.action !== 'user.failed_login');
    expect(bus.filter((event) => event.detail.action !== 'user.failed_login')).toHaveLength(counted.length);
    for (const entry of counted) {
      const event = bus.find((candidate) => candidate.detail.id === entry.id);
      expect(event?.detail).toEqual({ event_id: entry.id, ...entry });
    }
  });
});
