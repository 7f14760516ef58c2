import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, createUser, signedUpUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';
import type { WebClient } from '#test/web-client';

/**
 * Revoking an application ends everything the user gave it: codes issued before the revocation
 * cannot be exchanged afterwards, and a token minted from such a code while the revocation runs
 * does not survive it (whichever of the two commits first).
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type App = Awaited<ReturnType<typeof createApp>>;
let stack: Stack;
let app: App;

const CALLBACK = 'https://app.example/callback';
const PASSWORD = 'long-enough-pass-1';

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'hubot');
  app = await createApp(stack.endpointsFile, 'hubot', 'Hubot App', CALLBACK);
});
afterAll(async () => {
  await stack?.stop();
});

let users = 0;
const signedInUser = () => signedUpUser(stack.webUrl, `user-${++users}`, PASSWORD);

/** Authorizes `app` (approving the consent page when it is shown) and returns the code. */
async function codeFrom(browser: WebClient): Promise<string> {
  const path = `/login/oauth/authorize?${new URLSearchParams({ client_id: app.clientId, scope: 'gist', state: 's' })}`;
  let response = await browser.get(path);
  if (response.status === 200) {
    const fields: Record<string, string> = { decision: 'authorize', granted_scope: 'gist' };
    for (const match of browser.lastHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      if (match[1] !== '_csrf') fields[match[1] ?? ''] = (match[2] ?? '').replace(/&amp;/g, '&');
    response = await browser.post('/login/oauth/authorize', fields);
  }
  const code = new URL(response.headers.get('location') ?? 'missing:').searchParams.get('code');
  expect(code, `status ${response.status}`).toMatch(/^[0-9a-f]{40}$/);
  return code ?? '';
}

async function exchange(code: string): Promise<{ access_token?: string; error?: string }> {
  const response = await fetch(`${stack.webUrl}/login/oauth/access_token`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, code }),
  });
  expect(response.status).toBe(200);
  return json(response);
}

const tokenWorks = async (token: string) =>
  (await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } })).status === 200;

async function grantsOf(auth: string): Promise<Array<{ id: number; app: { client_id: string } }>> {
  const response = await fetch(`${stack.baseUrl}/applications/grants`, { headers: { Authorization: auth } });
  expect(response.status).toBe(200);
  return json(response);
}

type User = Awaited<ReturnType<typeof signedInUser>>;
/** The three ways to revoke an application, given one of its tokens for the user. */
const revocations: Record<string, (user: User, token: string) => Promise<void>> = {
  'the settings page': async (user) => {
    await user.browser.get(`/settings/connections/applications/${app.clientId}`);
    const response = await user.browser.post(`/settings/connections/applications/${app.clientId}/revoke`, {});
    expect(response.status).toBe(303);
  },
  'DELETE /applications/grants/{id}': async (user) => {
    const [grant] = await grantsOf(user.auth);
    const response = await fetch(`${stack.baseUrl}/applications/grants/${grant?.id}`, {
      method: 'DELETE',
      headers: { Authorization: user.auth },
    });
    expect(response.status).toBe(204);
  },
  'the application (DELETE /applications/{client_id}/grants/{token})': async (_, token) => {
    const response = await fetch(`${stack.baseUrl}/applications/${app.clientId}/grants/${token}`, {
      method: 'DELETE',
      headers: { Authorization: app.basic },
    });
    expect(response.status).toBe(204);
  },
};

describe('revoking an application', () => {
  it.each(Object.keys(revocations))('through %s kills the codes issued before it', async (way) => {
    const user = await signedInUser();
    const first = await exchange(await codeFrom(user.browser));
    const token = first.access_token ?? '';
    expect(await tokenWorks(token)).toBe(true);
    const outstanding = await codeFrom(user.browser);

    await revocations[way]?.(user, token);

    expect(await tokenWorks(token)).toBe(false);
    expect(await exchange(outstanding)).toMatchObject({ error: 'bad_verification_code' });
    expect(await grantsOf(user.auth)).toEqual([]);
    // A new authorization after the revocation works as usual.
    const again = await exchange(await codeFrom(user.browser));
    expect(await tokenWorks(again.access_token ?? '')).toBe(true);
  });

  it('while a code is being exchanged leaves no token of that code alive, whichever commits first', async () => {
    const rounds = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const user = await signedInUser();
        const first = await exchange(await codeFrom(user.browser));
        const outstanding = await codeFrom(user.browser);
        const [exchanged] = await Promise.all([
          exchange(outstanding),
          revocations['DELETE /applications/grants/{id}']?.(user, first.access_token ?? ''),
        ]);
        return { user, exchanged };
      }),
    );
    for (const { user, exchanged } of rounds) {
      if (exchanged.access_token) expect(await tokenWorks(exchanged.access_token)).toBe(false);
      else expect(exchanged.error).toBe('bad_verification_code');
      expect(await grantsOf(user.auth)).toEqual([]);
    }
  });
});
