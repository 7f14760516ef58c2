import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '#test/fixtures';
import { basicAuth, json, startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

const KELVIN = '\u212A';

describe('logins compare ASCII case only', () => {
  it('refuses the Kelvin sign as a k: API Basic, web login, profiles and repositories', async () => {
    const kate = await createUser(stack.endpointsFile, 'kate');
    const created = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: kate.auth },
      body: JSON.stringify({ name: 'notes' }),
    });
    expect(created.status).toBe(201);
    const alias = `${KELVIN}ate`;

    // Case still folds for ASCII letters.
    expect(
      (await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: basicAuth('KATE', kate.password) } }))
        .status,
    ).toBe(200);

    const api = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: basicAuth(alias, kate.password) },
    });
    expect(api.status).toBe(401);
    expect((await json(api)).message).toBe('Bad credentials');

    const browser = new WebClient(stack.webUrl);
    await browser.get('/login');
    const web = await browser.post('/login', { login: alias, password: kate.password });
    expect(web.status).toBe(401);
    expect(browser.cookie('session')).toBeUndefined();

    expect((await fetch(`${stack.baseUrl}/users/${encodeURIComponent(alias)}`)).status).toBe(404);
    expect((await fetch(`${stack.baseUrl}/repos/${encodeURIComponent(alias)}/notes`)).status).toBe(404);
    expect((await fetch(`${stack.baseUrl}/repos/KATE/NOTES`)).status).toBe(200);
  });
});
