import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { basicAuth, json, startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/**
 * Security finding 8: the sign-up email was shown to anyone on `GET /users/{login}`. GitHub shows
 * only an address the user chose to make public; the choice defaults to private.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;

const anonymousProfile = async (login: string) => json(await fetch(`${stack.baseUrl}/users/${login}`));
const ownProfile = async (login: string, password: string) =>
  json(await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: basicAuth(login, password) } }));

async function signUp(login: string, fields: Record<string, string>) {
  const browser = new WebClient(stack.webUrl);
  await browser.get('/signup');
  const checkbox = /<input type="checkbox" id="public_email"[^>]*>/.exec(browser.lastHtml)?.[0];
  const created = await browser.post('/signup', {
    login,
    email: `${login}@example.com`,
    password: 'long-enough-1',
    ...fields,
  });
  expect(created.status).toBe(303);
  return checkbox;
}

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('email on the public profile (admin CLI)', () => {
  it('is null for anyone else by default; the user sees their own address on GET /user', async () => {
    const created = await admin(
      stack.endpointsFile,
      'user',
      'create',
      'quiet',
      '--password',
      'quiet-pass-1',
      '--email',
      'quiet@example.com',
    );
    expect(created.code).toBe(0);

    expect((await anonymousProfile('quiet')).email).toBeNull();
    expect((await ownProfile('quiet', 'quiet-pass-1')).email).toBe('quiet@example.com');
  });

  it('is the address after `--public-email`', async () => {
    const created = await admin(
      stack.endpointsFile,
      'user',
      'create',
      'loud',
      '--password',
      'loud-pass-1',
      '--email',
      'loud@example.com',
      '--public-email',
    );
    expect(created.code).toBe(0);

    expect((await anonymousProfile('loud')).email).toBe('loud@example.com');
  });
});

describe('email on the public profile (sign-up page)', () => {
  it('offers an unticked "Show my email on my public profile"; unticked keeps the address private', async () => {
    const checkbox = await signUp('private-signup', {});

    expect(checkbox).toBeDefined();
    expect(checkbox).not.toContain('checked');
    expect((await anonymousProfile('private-signup')).email).toBeNull();
    expect((await ownProfile('private-signup', 'long-enough-1')).email).toBe('private-signup@example.com');
  });

  it('shows the address to anyone once ticked', async () => {
    await signUp('public-signup', { public_email: '1' });

    expect((await anonymousProfile('public-signup')).email).toBe('public-signup@example.com');
  });
});
