import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '#domain/scopes';
import { admin } from '#test/admin';
import { createApp, createUser } from '#test/fixtures';
import { generateSshKey } from '#test/ssh-keys';
import { basicAuth, json, startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type User = Awaited<ReturnType<typeof createUser>>;
let stack: Stack;
let octocat: User;
let hubot: User;

const XSS_APP = '<script>alert(1)</script>';
const XSS_NOTE = '<img src=x onerror=alert(1)>';

beforeAll(async () => {
  stack = await startTestStack();
  octocat = await createUser(stack.endpointsFile, 'octocat', 'octocat-pass-1');
  hubot = await createUser(stack.endpointsFile, 'hubot', 'hubot-pass-12');
});
afterAll(async () => {
  await stack?.stop();
});

/** A browser signed in through the /login form. */
async function signIn(user: User): Promise<WebClient> {
  const browser = new WebClient(stack.webUrl);
  await browser.get('/login');
  const response = await browser.post('/login', { login: user.login, password: user.password });
  expect(response.status).toBe(303);
  return browser;
}

const api = (path: string, init: RequestInit = {}) => fetch(`${stack.baseUrl}${path}`, init);
const asToken = (token: string) => ({ headers: { Authorization: `token ${token}` } });

/** A token of `user` for an application, made the non-web way (POST /authorizations with the app's secret). */
async function appToken(user: User, app: { clientId: string; clientSecret: string }, scopes: string[]) {
  const response = await api('/authorizations', {
    method: 'POST',
    headers: { Authorization: user.auth },
    body: JSON.stringify({
      scopes,
      note: `app token ${Math.random()}`,
      client_id: app.clientId,
      client_secret: app.clientSecret,
    }),
  });
  expect(response.status).toBe(201);
  return (await json(response)) as { id: number; token: string };
}

const checkToken = (clientId: string, secret: string, token: string) =>
  api(`/applications/${clientId}/tokens/${token}`, {
    headers: { Authorization: basicAuth(clientId, secret) },
  });

/** Structural accessibility checks on a page's HTML. */
function expectAccessible(page: string): void {
  expect(page.match(/<h1[\s>]/g) ?? [], 'exactly one h1').toHaveLength(1);
  for (const input of page.matchAll(/<input\b[^>]*>/g)) {
    if (/type="hidden"/.test(input[0])) continue;
    const id = /\sid="([^"]+)"/.exec(input[0])?.[1];
    expect(id, input[0]).toBeTruthy();
    expect(page, `label for ${id}`).toContain(`<label for="${id}">`);
  }
  for (const table of page.matchAll(/<table>[\s\S]*?<\/table>/g))
    expect(table[0]).toContain('<th scope="col">');
  for (const button of page.matchAll(/<button\b[^>]*>([^<]*)<\/button>/g))
    expect(button[1]?.trim()).toBeTruthy();
  for (const form of page.matchAll(/<form method="post"[\s\S]*?<\/form>/g))
    expect(form[0]).toContain('name="_csrf"');
}

/** The raw HTML shows the text and never the markup. */
function expectEscaped(page: string): void {
  expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  expect(page).not.toContain('<script>alert');
}

/** The id in the delete action of the token row whose note is `note`. */
function tokenIdFor(page: string, note: string): string {
  const before = page.slice(0, page.indexOf(`aria-label="Delete token ${note}"`));
  return [...before.matchAll(/action="\/settings\/tokens\/(\d+)\/delete"/g)].at(-1)?.[1] ?? '';
}

const secretFrom = (page: string) => /<dd class="secret"><code>([^<]+)<\/code><\/dd>/.exec(page)?.[1];

describe('settings pages: signed out', () => {
  it('send visitors to sign in and back to the page they asked for', async () => {
    const browser = new WebClient(stack.webUrl);
    for (const path of [
      '/settings/connections/applications',
      '/settings/connections/applications/0123456789abcdef0123',
      '/settings/tokens',
      '/settings/developers',
      '/settings/developers/0123456789abcdef0123',
    ]) {
      const response = await browser.get(path);
      expect(response.status, path).toBe(302);
      expect(response.headers.get('location'), path).toBe(`/login?return_to=${encodeURIComponent(path)}`);
    }
    await browser.get('/login');
    const post = await browser.post('/settings/tokens', { note: 'x' });
    expect(post.status).toBe(303);
    expect(post.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent('/settings/tokens')}`);
  });
});

describe('authorized OAuth applications (/settings/connections/applications)', () => {
  it('show an empty state when nothing is authorized', async () => {
    const browser = await signIn(hubot);
    const response = await browser.get('/settings/connections/applications');
    expect(response.status).toBe(200);
    expect(browser.lastHtml).toContain('You have not authorized any applications.');
    expectAccessible(browser.lastHtml);
  });

  it('list each authorized app with its scopes in plain words, when authorized and when last used', async () => {
    const app = await createApp(stack.endpointsFile, 'hubot', XSS_APP);
    const { token } = await appToken(octocat, app, ['repo', 'user']);
    const browser = await signIn(octocat);
    await browser.get('/settings/connections/applications');
    const page = browser.lastHtml;
    expectEscaped(page);
    expectAccessible(page);
    expect(page).toContain(`href="/settings/connections/applications/${app.clientId}"`);
    expect(page).toContain(SCOPES.repo);
    expect(page).toContain(SCOPES.user);
    expect(page).toContain('Never used');
    expect(page).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[\d:]+Z">\d{1,2} [A-Z][a-z]{2} \d{4}<\/time>/);

    expect((await api('/user', asToken(token))).status).toBe(200);
    await browser.get('/settings/connections/applications');
    expect(browser.lastHtml).toContain('Within the last hour');
    expect(browser.lastHtml).not.toContain('Never used');
  });

  it('review one app: owner, homepage, each scope with its description, dates and a labelled Revoke button', async () => {
    const app = await createApp(stack.endpointsFile, 'hubot', `${XSS_APP} review`);
    await appToken(octocat, app, ['gist']);
    const browser = await signIn(octocat);
    const response = await browser.get(`/settings/connections/applications/${app.clientId}`);
    expect(response.status).toBe(200);
    const page = browser.lastHtml;
    expectEscaped(page);
    expectAccessible(page);
    expect(page).toContain('<dt>Owner</dt><dd>hubot</dd>');
    expect(page).toContain('<a href="https://app.example" rel="noopener noreferrer">https://app.example</a>');
    expect(page).toContain(`<code>gist</code>: ${SCOPES.gist}`);
    expect(page).toContain('Never used');
    expect(page).toContain(`action="/settings/connections/applications/${app.clientId}/revoke"`);
    expect(page).toContain('aria-label="Revoke access for &lt;script&gt;alert(1)&lt;/script&gt; review"');
  });

  it('answer 404 for an unknown app, or an app the user has not authorized', async () => {
    const app = await createApp(stack.endpointsFile, 'octocat', 'Not Granted');
    const browser = await signIn(hubot);
    expect((await browser.get('/settings/connections/applications/ffffffffffffffffffff')).status).toBe(404);
    expect((await browser.get(`/settings/connections/applications/${app.clientId}`)).status).toBe(404);
    expectAccessible(browser.lastHtml);
    await browser.get('/settings/connections/applications');
    expect((await browser.post(`/settings/connections/applications/${app.clientId}/revoke`, {})).status).toBe(
      404,
    );
  });

  it('revoke exactly as the API does: tokens stop working and the keys the app created are deleted', async () => {
    const app = await createApp(stack.endpointsFile, 'hubot', 'Hubot App');
    const first = await appToken(octocat, app, ['repo', 'admin:public_key']);
    const second = await appToken(octocat, app, ['user']);
    const key = await api('/user/keys', {
      method: 'POST',
      headers: { Authorization: `token ${first.token}` },
      body: JSON.stringify({ title: 'made by the app', key: generateSshKey().line }),
    });
    expect(key.status).toBe(201);
    const keyId = (await json(key)).id as number;

    const browser = await signIn(octocat);
    await browser.get(`/settings/connections/applications/${app.clientId}`);
    expect(browser.lastHtml).toContain('aria-label="Revoke access for Hubot App"');
    const revoke = await browser.post(`/settings/connections/applications/${app.clientId}/revoke`, {});
    expect(revoke.status).toBe(303);
    expect(revoke.headers.get('location')).toBe('/settings/connections/applications?notice=app-revoked');

    expect((await api('/user', asToken(first.token))).status).toBe(401);
    expect((await api('/user', asToken(second.token))).status).toBe(401);
    expect((await api(`/user/keys/${keyId}`, { headers: { Authorization: octocat.auth } })).status).toBe(404);

    await browser.get('/settings/connections/applications?notice=app-revoked');
    expect(browser.lastHtml).toContain('Access revoked.');
    expect(browser.lastHtml).not.toContain(`/settings/connections/applications/${app.clientId}"`);
    expect((await browser.get(`/settings/connections/applications/${app.clientId}`)).status).toBe(404);
  });

  it('show only fixed notices, whatever the link says', async () => {
    const browser = await signIn(hubot);
    await browser.get('/settings/connections/applications?notice=%3Cb%3Ehello');
    expect(browser.lastHtml).not.toContain('class="notice"');
    expect(browser.lastHtml).not.toContain('hello');
  });
});

describe('personal access tokens (/settings/tokens)', () => {
  it('offer a create form with a labelled note and one described checkbox per scope in a fieldset', async () => {
    const browser = await signIn(octocat);
    const response = await browser.get('/settings/tokens');
    expect(response.status).toBe(200);
    const page = browser.lastHtml;
    expectAccessible(page);
    expect(page).toContain('<fieldset>');
    expect(page).toContain('<legend>Scopes</legend>');
    expect(page).toContain('<label for="note">Note</label>');
    for (const [scope, description] of Object.entries(SCOPES)) {
      expect(page).toContain(`name="scopes" value="${scope}"`);
      expect(page).toContain(description);
    }
  });

  it('create a token and show it once, with a warning; the list then shows the note escaped and the last eight', async () => {
    const browser = await signIn(octocat);
    await browser.get('/settings/tokens');
    const created = await browser.post('/settings/tokens', {
      note: XSS_NOTE,
      scopes: ['repo', 'gist', 'repo'],
    });
    expect(created.status).toBe(200);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const token = secretFrom(browser.lastHtml) ?? '';
    expect(token).toMatch(/^ghp_[A-Za-z0-9]{36}$/);
    expect(browser.lastHtml).toContain('you won’t be able to see it again');
    expect(browser.lastHtml).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(browser.lastHtml).not.toContain('<img src=x');
    expectAccessible(browser.lastHtml);

    const me = await api('/user', asToken(token));
    expect(me.status).toBe(200);
    expect(me.headers.get('x-oauth-scopes')).toBe('gist, repo');

    await browser.get('/settings/tokens');
    const page = browser.lastHtml;
    expect(page).not.toContain(token);
    expect(page).toContain(`<code>…${token.slice(-8)}</code>`);
    expect(page).toContain('<td>&lt;img src=x onerror=alert(1)&gt;</td>');
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('aria-label="Regenerate token &lt;img src=x onerror=alert(1)&gt;"');
    expect(page).toContain('<code>gist</code>, <code>repo</code>');
  });

  it('refuse a missing or duplicate note with 422 on the form, keeping what was typed', async () => {
    const browser = await signIn(octocat);
    await browser.get('/settings/tokens');
    const missing = await browser.post('/settings/tokens', { note: '  ', scopes: ['gist', 'read:org'] });
    expect(missing.status).toBe(422);
    expect(browser.lastHtml).toContain('Note can’t be blank.');
    expect(browser.lastHtml).toContain('role="alert"');
    expect(browser.lastHtml).toMatch(/value="gist" aria-describedby="scope-gist-help" checked>/);
    expect(browser.lastHtml).toMatch(/value="read:org" aria-describedby="scope-read-org-help" checked>/);
    expect(browser.lastHtml).not.toMatch(/value="repo" aria-describedby="scope-repo-help" checked>/);
    expectAccessible(browser.lastHtml);

    expect((await browser.post('/settings/tokens', { note: 'deploy "bot"', scopes: ['gist'] })).status).toBe(
      200,
    );
    const duplicate = await browser.post('/settings/tokens', { note: 'deploy "bot"', scopes: ['user'] });
    expect(duplicate.status).toBe(422);
    expect(browser.lastHtml).toContain('You already have a token with this note.');
    expect(browser.lastHtml).toContain('value="deploy &quot;bot&quot;"');
    expect(browser.lastHtml).toMatch(/value="user" aria-describedby="scope-user-help" checked>/);
    expect(secretFrom(browser.lastHtml)).toBeUndefined();
  });

  it('regenerate a token: the old value fails at once, the new one (shown once) works', async () => {
    const browser = await signIn(octocat);
    await browser.get('/settings/tokens');
    await browser.post('/settings/tokens', { note: 'to regenerate', scopes: ['gist'] });
    const old = secretFrom(browser.lastHtml) ?? '';
    const id = tokenIdFor(browser.lastHtml, 'to regenerate');
    expect(id).toBeTruthy();
    const regenerated = await browser.post(`/settings/tokens/${id}/regenerate`, {});
    expect(regenerated.status).toBe(200);
    expect(regenerated.headers.get('cache-control')).toBe('no-store');
    expect(browser.lastHtml).toContain('The old token no longer works.');
    const fresh = secretFrom(browser.lastHtml) ?? '';
    expect(fresh).toMatch(/^ghp_/);
    expect(fresh).not.toBe(old);
    expect((await api('/user', asToken(old))).status).toBe(401);
    expect((await api('/user', asToken(fresh))).status).toBe(200);
  });

  it('delete a token: 303 back to the list with a notice, and the token stops working', async () => {
    const browser = await signIn(octocat);
    await browser.get('/settings/tokens');
    await browser.post('/settings/tokens', { note: 'to delete', scopes: [] });
    const token = secretFrom(browser.lastHtml) ?? '';
    const id = tokenIdFor(browser.lastHtml, 'to delete');
    const deleted = await browser.post(`/settings/tokens/${id}/delete`, {});
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/settings/tokens?notice=token-deleted');
    expect((await api('/user', asToken(token))).status).toBe(401);
    await browser.get('/settings/tokens?notice=token-deleted');
    expect(browser.lastHtml).toContain('Token deleted.');
    expect(browser.lastHtml).not.toContain('>to delete<');
    expect((await browser.post(`/settings/tokens/${id}/delete`, {})).status).toBe(404);
  });

  it('let no one else see, regenerate or delete a token, nor touch app tokens from here (404)', async () => {
    const owner = await signIn(octocat);
    await owner.get('/settings/tokens');
    await owner.post('/settings/tokens', { note: 'private to octocat', scopes: ['gist'] });
    const token = secretFrom(owner.lastHtml) ?? '';
    const id = tokenIdFor(owner.lastHtml, 'private to octocat');

    const other = await signIn(hubot);
    await other.get('/settings/tokens');
    expect(other.lastHtml).not.toContain('private to octocat');
    expect((await other.post(`/settings/tokens/${id}/regenerate`, {})).status).toBe(404);
    expect((await other.post(`/settings/tokens/${id}/delete`, {})).status).toBe(404);
    expect((await other.post('/settings/tokens/not-a-number/delete', {})).status).toBe(404);
    expect((await api('/user', asToken(token))).status).toBe(200);

    const app = await createApp(stack.endpointsFile, 'hubot', 'App Tokens Stay');
    const appTok = await appToken(octocat, app, ['gist']);
    await owner.get('/settings/tokens');
    expect((await owner.post(`/settings/tokens/${appTok.id}/delete`, {})).status).toBe(404);
    expect((await api('/user', asToken(appTok.token))).status).toBe(200);
  });
});

describe('developer settings (/settings/developers)', () => {
  it('refuse bad registrations on the form with 422, keeping the input', async () => {
    const browser = await signIn(octocat);
    const list = await browser.get('/settings/developers');
    expect(list.status).toBe(200);
    expectAccessible(browser.lastHtml);
    const bad = await browser.post('/settings/developers', {
      name: '',
      url: 'javascript:alert(1)',
      callback_url: 'https://user:pw@app.example/cb',
    });
    expect(bad.status).toBe(422);
    const page = browser.lastHtml;
    expect(page).toContain('Application name can’t be blank.');
    expect(page).toContain('Homepage URL must be an absolute http:// or https:// URL');
    expect(page).toContain('Authorization callback URL must be an absolute http:// or https:// URL');
    expect(page).toContain('value="javascript:alert(1)"');
    expect(page).toContain('value="https://user:pw@app.example/cb"');
    expect(page).not.toContain('href="javascript:');
    expectAccessible(page);
  });

  it('register an app, show its client secret once, list it and show its page (owner only)', async () => {
    const browser = await signIn(octocat);
    await browser.get('/settings/developers');
    const created = await browser.post('/settings/developers', {
      name: XSS_APP,
      url: 'https://tool.example',
      callback_url: 'https://tool.example/callback',
    });
    expect(created.status).toBe(200);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const page = browser.lastHtml;
    expectEscaped(page);
    expectAccessible(page);
    const clientId = /<dt>Client ID<\/dt><dd><code>([0-9a-f]{20})<\/code><\/dd>/.exec(page)?.[1] ?? '';
    const secret = secretFrom(page) ?? '';
    expect(clientId).toHaveLength(20);
    expect(secret).toMatch(/^[0-9a-f]{40}$/);
    expect(page).toContain('you won’t be able to see it again');

    // The secret works as the application's credential.
    const { token } = await appToken(hubot, { clientId, clientSecret: secret }, ['gist']);
    expect((await checkToken(clientId, secret, token)).status).toBe(200);

    await browser.get('/settings/developers');
    expectEscaped(browser.lastHtml);
    expect(browser.lastHtml).toContain(`<a href="/settings/developers/${clientId}">`);
    expect(browser.lastHtml).toContain(`<code>${clientId}</code>`);
    expect(browser.lastHtml).not.toContain(secret);

    await browser.get(`/settings/developers/${clientId}`);
    const appPage = browser.lastHtml;
    expectEscaped(appPage);
    expectAccessible(appPage);
    expect(appPage).not.toContain(secret);
    expect(appPage).toContain('<code>https://tool.example/callback</code>');
    expect(appPage).toContain('<dt>Status</dt><dd>Active</dd>');
    expect(appPage).toContain('<td>hubot</td>');
    expect(appPage).toContain(
      'aria-label="Generate a new client secret for &lt;script&gt;alert(1)&lt;/script&gt;"',
    );

    const other = await signIn(hubot);
    expect((await other.get(`/settings/developers/${clientId}`)).status).toBe(404);
    await other.get('/settings/developers');
    expect(other.lastHtml).not.toContain(clientId);
    expect((await other.post(`/settings/developers/${clientId}/secret`, {})).status).toBe(404);
    expect((await checkToken(clientId, secret, token)).status).toBe(200);
  });

  it('generate a new client secret: the old one stops working at once, the new one works', async () => {
    const app = await createApp(stack.endpointsFile, 'octocat', 'Rotating App');
    const { token } = await appToken(hubot, app, ['user']);
    expect((await checkToken(app.clientId, app.clientSecret, token)).status).toBe(200);

    const browser = await signIn(octocat);
    await browser.get(`/settings/developers/${app.clientId}`);
    const rotated = await browser.post(`/settings/developers/${app.clientId}/secret`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    expect(browser.lastHtml).toContain('The previous secret no longer works.');
    const secret = secretFrom(browser.lastHtml) ?? '';
    expect(secret).toMatch(/^[0-9a-f]{40}$/);

    expect((await checkToken(app.clientId, app.clientSecret, token)).status).toBe(404);
    const check = await checkToken(app.clientId, secret, token);
    expect(check.status).toBe(200);
    expect((await json(check)).user.login).toBe('hubot');
    // Tokens already issued keep working.
    expect((await api('/user', asToken(token))).status).toBe(200);
  });

  it('show a suspended application as suspended', async () => {
    const app = await createApp(stack.endpointsFile, 'octocat', 'Suspended App');
    expect((await admin(stack.endpointsFile, 'app', 'suspend', app.clientId)).code).toBe(0);
    const browser = await signIn(octocat);
    await browser.get(`/settings/developers/${app.clientId}`);
    expect(browser.lastHtml).toContain('<dt>Status</dt><dd>Suspended:');
    await browser.get('/settings/developers');
    expect(browser.lastHtml).toMatch(new RegExp(`${app.clientId}</code></td>\\s*<td>Suspended</td>`));
  });

  it("revoke a user's token of the app; only a token of this app and that user can be revoked", async () => {
    const app = await createApp(stack.endpointsFile, 'octocat', 'Revoking App');
    const other = await createApp(stack.endpointsFile, 'octocat', 'Other App');
    const victim = await appToken(hubot, app, ['gist']);
    const keep = await appToken(hubot, app, ['user']);
    const otherAppToken = await appToken(hubot, other, ['gist']);

    const browser = await signIn(octocat);
    await browser.get(`/settings/developers/${app.clientId}`);
    expect(browser.lastHtml).toContain(`aria-label="Revoke token ${victim.id} of hubot"`);
    expect(browser.lastHtml).toContain('name="login" value="hubot"');

    const base = `/settings/developers/${app.clientId}/authorizations`;
    expect((await browser.post(`${base}/${victim.id}/revoke`, { login: 'octocat' })).status).toBe(404);
    expect((await browser.post(`${base}/${otherAppToken.id}/revoke`, { login: 'hubot' })).status).toBe(404);
    expect((await browser.post(`${base}/${victim.id}/revoke`, {})).status).toBe(404);
    expect((await api('/user', asToken(victim.token))).status).toBe(200);
    expect((await api('/user', asToken(otherAppToken.token))).status).toBe(200);

    const revoked = await browser.post(`${base}/${victim.id}/revoke`, { login: 'hubot' });
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('location')).toBe(`/settings/developers/${app.clientId}?notice=token-revoked`);
    expect((await api('/user', asToken(victim.token))).status).toBe(401);
    expect((await api('/user', asToken(keep.token))).status).toBe(200);

    await browser.get(`/settings/developers/${app.clientId}?notice=token-revoked`);
    expect(browser.lastHtml).toContain('Token revoked.');
    expect(browser.lastHtml).not.toContain(`Revoke token ${victim.id} of hubot`);
    expect(browser.lastHtml).toContain(`Revoke token ${keep.id} of hubot`);

    // Someone else cannot revoke this app's tokens.
    const intruder = await signIn(hubot);
    await intruder.get('/settings/developers');
    expect((await intruder.post(`${base}/${keep.id}/revoke`, { login: 'hubot' })).status).toBe(404);
    expect((await api('/user', asToken(keep.token))).status).toBe(200);
  });
});

describe('settings forms and CSRF', () => {
  it('refuse every POST without the CSRF field (403) and change nothing', async () => {
    const app = await createApp(stack.endpointsFile, 'octocat', 'CSRF App');
    const appTok = await appToken(octocat, app, ['gist']);
    const browser = await signIn(octocat);
    await browser.get('/settings/tokens');
    await browser.post('/settings/tokens', { note: 'csrf target', scopes: ['gist'] });
    const personal = secretFrom(browser.lastHtml) ?? '';
    const personalId = tokenIdFor(browser.lastHtml, 'csrf target');
    await browser.get('/settings/tokens');
    const tokensBefore = (browser.lastHtml.match(/<tr>/g) ?? []).length;
    await browser.get('/settings/developers');
    const appsBefore = (browser.lastHtml.match(/<tr>/g) ?? []).length;

    const posts: [string, Record<string, string>][] = [
      [`/settings/connections/applications/${app.clientId}/revoke`, {}],
      ['/settings/tokens', { note: 'forged', scopes: 'repo' }],
      [`/settings/tokens/${personalId}/regenerate`, {}],
      [`/settings/tokens/${personalId}/delete`, {}],
      [
        '/settings/developers',
        { name: 'Forged', url: 'https://f.example', callback_url: 'https://f.example/cb' },
      ],
      [`/settings/developers/${app.clientId}/secret`, {}],
      [`/settings/developers/${app.clientId}/authorizations/${appTok.id}/revoke`, { login: 'octocat' }],
    ];
    for (const [path, fields] of posts) {
      const response = await browser.post(path, fields, { csrf: null });
      expect(response.status, path).toBe(403);
      expect(browser.lastHtml, path).not.toMatch(/ghp_|[0-9a-f]{40}/);
    }

    expect((await api('/user', asToken(appTok.token))).status).toBe(200);
    expect((await api('/user', asToken(personal))).status).toBe(200);
    expect((await checkToken(app.clientId, app.clientSecret, appTok.token)).status).toBe(200);
    await browser.get('/settings/tokens');
    expect((browser.lastHtml.match(/<tr>/g) ?? []).length).toBe(tokensBefore);
    expect(browser.lastHtml).not.toContain('forged');
    await browser.get('/settings/developers');
    expect((browser.lastHtml.match(/<tr>/g) ?? []).length).toBe(appsBefore);
    expect(browser.lastHtml).not.toContain('Forged');
  });
});
