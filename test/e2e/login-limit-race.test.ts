import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, createUser, enableOtp } from '#test/fixtures';
import { basicAuth, json, startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/**
 * The failed-login limit under concurrency: after nine failures an attacker sends sixteen wrong
 * guesses at once and then the right one while they are still being checked. Only one guess may
 * still be checked (the tenth); every other request, the right one included, gets the lock-out
 * answer. A 401 (or a 2FA challenge) is a secret that was checked and found wrong, so counting
 * them counts the checks.
 */
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

const LOCKED = 'Maximum number of login attempts exceeded. Please try again later.';
/** Long enough for the wrong guesses to reach the limit check, far shorter than one scrypt. */
const HEAD_START_MS = 100;

const apiUser = (login: string, password: string, otp?: string) =>
  fetch(`${stack.baseUrl}/user`, {
    headers: { Authorization: basicAuth(login, password), ...(otp ? { 'X-GitHub-OTP': otp } : {}) },
  });

/** Sixteen wrong attempts at once, then the right one while they are in flight. */
async function burst<T>(
  wrong: (i: number) => Promise<T>,
  right: () => Promise<T>,
  headStartMs = HEAD_START_MS,
) {
  const guesses = Array.from({ length: 16 }, (_, i) => wrong(i));
  await sleep(headStartMs);
  const answer = await right();
  return { guesses: await Promise.all(guesses), answer };
}

describe('failed-login limit under concurrent guesses', () => {
  it('API Basic: the right password after 9 + 16 concurrent failures gets the lock-out, and at most 10 passwords are checked', async () => {
    const user = await createUser(stack.endpointsFile, 'racer-api');
    for (let i = 0; i < 9; i++) expect((await apiUser(user.login, `wrong-${i}-pass`)).status).toBe(401);

    const { guesses, answer } = await burst(
      (i) => apiUser(user.login, `burst-${i}-pass`),
      () => apiUser(user.login, user.password),
    );
    expect(answer.status).toBe(403);
    expect((await json(answer)).message).toBe(LOCKED);
    const statuses = guesses.map((response) => response.status);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(1);
    expect(statuses.every((status) => status === 401 || status === 403)).toBe(true);
    expect((await apiUser(user.login, user.password)).status).toBe(403);
  });

  it('web login: the same burst against POST /login is refused with the lock-out page', async () => {
    const user = await createUser(stack.endpointsFile, 'racer-web');
    const attempt = async (password: string) => {
      const browser = new WebClient(stack.webUrl);
      await browser.get('/login');
      return browser.post('/login', { login: user.login, password });
    };
    for (let i = 0; i < 9; i++) expect((await attempt(`wrong-${i}-pass`)).status).toBe(401);
    // Every browser fetches its form (and CSRF token) first, so the posts themselves race.
    const browsers = await Promise.all(
      Array.from({ length: 17 }, async () => {
        const browser = new WebClient(stack.webUrl);
        await browser.get('/login');
        return browser;
      }),
    );
    const post = (browser: WebClient, password: string) =>
      browser.post('/login', { login: user.login, password });
    const { guesses, answer } = await burst(
      (i) => post(browsers[i] as WebClient, `burst-${i}-pass`),
      () => post(browsers[16] as WebClient, user.password),
    );
    expect(answer.status).toBe(403);
    expect(await answer.text()).toContain(LOCKED);
    expect(answer.headers.getSetCookie().join('\n')).not.toContain('session=');
    const statuses = guesses.map((response) => response.status);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(1);
    expect(statuses.every((status) => status === 401 || status === 403)).toBe(true);
  });

  it('API one-time codes: the right code after 9 + 16 concurrent wrong codes gets the lock-out', async () => {
    const user = await createUser(stack.endpointsFile, 'racer-otp');
    const otp = await enableOtp(stack.endpointsFile, user.login);
    const wrongCode = (i: number) => String((Number(otp.code()) + 500_000 + i) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 9; i++)
      expect((await apiUser(user.login, user.password, wrongCode(100 + i))).status).toBe(401);

    const { guesses, answer } = await burst(
      (i) => apiUser(user.login, user.password, wrongCode(i)),
      () => apiUser(user.login, user.password, otp.code()),
    );
    expect(answer.status).toBe(403);
    expect((await json(answer)).message).toBe(LOCKED);
    const statuses = guesses.map((response) => response.status);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(1);
    expect(statuses.every((status) => status === 401 || status === 403)).toBe(true);
  });

  it('web two-factor page: of 16 wrong codes and the right one sent at once after 9 failures, at most one wrong code is checked', async () => {
    const user = await createUser(stack.endpointsFile, 'racer-web-otp');
    const otp = await enableOtp(stack.endpointsFile, user.login);
    const wrongCode = (i: number) => String((Number(otp.code()) + 500_000 + i) % 1_000_000).padStart(6, '0');
    /** A browser whose password step is done: it holds a pending session and the code form. */
    const pendingBrowser = async () => {
      const browser = new WebClient(stack.webUrl);
      await browser.get('/login');
      expect((await browser.post('/login', { login: user.login, password: user.password })).status).toBe(303);
      await browser.get('/login/two-factor');
      return browser;
    };
    // All password steps first (one after another: each is a reserved attempt, given back).
    const first = await pendingBrowser();
    const browsers: WebClient[] = [];
    for (let i = 0; i < 17; i++) browsers.push(await pendingBrowser());
    for (let i = 0; i < 9; i++)
      expect((await first.post('/login/two-factor', { otp: wrongCode(100 + i) })).status).toBe(401);
    const { guesses, answer } = await burst(
      (i) => (browsers[i] as WebClient).post('/login/two-factor', { otp: wrongCode(i) }),
      () => (browsers[16] as WebClient).post('/login/two-factor', { otp: otp.code() }),
      // Checking a code takes no scrypt, so there is no slow window to aim into: all at once, and
      // whichever request takes the last slot is the only one checked (the right code may be it).
      0,
    );
    const statuses = [...guesses, answer].map((response) => response.status);
    // The last slot goes to one request. A right code that takes it gives it back on success (a
    // right code is not a failure), so one wrong code may still be checked after it: never two.
    expect(
      guesses.filter((response) => response.status === 401).length,
      String(statuses),
    ).toBeLessThanOrEqual(1);
    expect(
      guesses.every((response) => response.status === 401 || response.status === 403),
      String(statuses),
    ).toBe(true);
    expect([303, 403]).toContain(answer.status);
  });

  it('a right password is not a failure: ten good sign-ins after nine failures do not lock the login', async () => {
    const user = await createUser(stack.endpointsFile, 'racer-good');
    for (let i = 0; i < 9; i++) expect((await apiUser(user.login, `wrong-${i}-pass`)).status).toBe(401);
    for (let i = 0; i < 10; i++) expect((await apiUser(user.login, user.password)).status).toBe(200);
  });

  it('many right passwords at once are no guesses: after five failures, twenty concurrent sign-ins all succeed', async () => {
    // Five free slots: the twenty queue behind each other's password checks instead of being refused.
    const user = await createUser(stack.endpointsFile, 'racer-crowd');
    for (let i = 0; i < 5; i++) expect((await apiUser(user.login, `wrong-${i}-pass`)).status).toBe(401);
    const answers = await Promise.all(Array.from({ length: 20 }, () => apiUser(user.login, user.password)));
    expect(answers.map((response) => response.status)).toEqual(Array(20).fill(200));
    // The tenth failure still locks the login.
    for (let i = 5; i < 10; i++) expect((await apiUser(user.login, `wrong-${i}-pass`)).status).toBe(401);
    expect((await apiUser(user.login, user.password)).status).toBe(403);
  });
});

describe('failed-login limit and application credentials', () => {
  it("an app's client_id and secrets sent as Basic on user routes do not lock out the user of that login", async () => {
    const appOwner = await createUser(stack.endpointsFile, 'app-owner-limits');
    const app = await createApp(stack.endpointsFile, appOwner.login);
    // A user whose login is the application's client id (20 hex characters are a valid login).
    const user = await createUser(stack.endpointsFile, app.clientId);
    const rotated = Array.from({ length: 9 }, (_, i) => `${i}`.padStart(2, '0').repeat(20));
    for (const secret of [app.clientSecret, ...rotated])
      expect((await apiUser(app.clientId, secret)).status).toBe(401);

    const signedIn = await apiUser(user.login, user.password);

    expect(signedIn.status).toBe(200);
    expect((await json(signedIn)).login).toBe(app.clientId);
    // Its own counter still limits such attempts.
    const limited = await apiUser(app.clientId, 'ab'.repeat(20));
    expect(limited.status).toBe(403);
    expect((await json(limited)).message).toBe(LOCKED);
    // And password guesses still count toward the login's own lock-out.
    for (let i = 0; i < 10; i++) expect((await apiUser(user.login, `wrong-${i}-pass`)).status).toBe(401);
    expect((await apiUser(user.login, user.password)).status).toBe(403);
  });
});
