import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { createApp, createUser, signedUpUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';
import { authorizedCode, type WebClient } from '#test/web-client';

/**
 * Revocation that always revokes, over HTTP: an application resets and refreshes its tokens
 * while they are deleted (by the user, by the grant's revocation, by the 10-token limit as new
 * codes are exchanged and the user creates tokens). Whatever commits first, every token that
 * answers 200 is one the user sees in `GET /authorizations`, and after a revocation none of the
 * tokens the application held answers 200. The races are probabilistic: each round is a new user,
 * the violations are summed over all rounds and must be none.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type App = Awaited<ReturnType<typeof createApp>>;
type User = Awaited<ReturnType<typeof signedUpUser>>;
let stack: Stack;
let app: App;

const ROUNDS = 16;
const PARALLEL_ROUNDS = 4;
const SCOPE = 'gist';

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'racer');
  app = await createApp(stack.endpointsFile, 'racer', 'Racing App');
  // Exchanged tokens expire and come with refresh tokens, so that refreshes race too.
  const enabled = await admin(stack.endpointsFile, 'app', 'token-expiration', 'enable', app.clientId);
  if (enabled.code !== 0) throw new Error(enabled.stderr);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');
const pick = <T>(items: readonly T[], count: number): T[] =>
  [...items].sort(() => Math.random() - 0.5).slice(0, count);

/** A token the application or the user holds: its authorization id and, when it has one, its refresh token. */
interface Held {
  readonly id: number;
  readonly token: string;
  refresh?: string;
}

const codeFrom = (browser: WebClient) => authorizedCode(browser, app.clientId, SCOPE);

/** The authorization id a token belongs to, as the application sees it. */
async function idOf(token: string): Promise<number | undefined> {
  const response = await fetch(`${stack.baseUrl}/applications/${app.clientId}/tokens/${token}`, {
    headers: { Authorization: app.basic },
  });
  return response.status === 200 ? Number((await json(response)).id) : undefined;
}

const accessTokenRequest = (fields: Record<string, string>) =>
  fetch(`${stack.webUrl}/login/oauth/access_token`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, ...fields }),
  });

/** A code exchanged: the token (with its id) or nothing (the code died with a revocation). */
async function exchange(code: string): Promise<Held | undefined> {
  const body = await json(await accessTokenRequest({ code }));
  if (!body.access_token) return undefined;
  const id = await idOf(body.access_token);
  return { id: id ?? -1, token: body.access_token, refresh: body.refresh_token };
}

/** The user's own token for the application (POST /authorizations with the app's credentials). */
async function userCreates(user: User): Promise<Held | undefined> {
  const response = await fetch(`${stack.baseUrl}/authorizations`, {
    method: 'POST',
    headers: { Authorization: user.auth },
    body: JSON.stringify({
      scopes: [SCOPE],
      note: `n-${Math.random()}`,
      client_id: app.clientId,
      client_secret: app.clientSecret,
    }),
  });
  if (response.status !== 201) return undefined;
  const body = await json(response);
  return { id: Number(body.id), token: String(body.token) };
}

/** The application resets a token; the new one, or nothing when it is gone. */
async function reset(held: Held): Promise<Held | undefined> {
  const response = await fetch(`${stack.baseUrl}/applications/${app.clientId}/tokens/${held.token}`, {
    method: 'POST',
    headers: { Authorization: app.basic },
  });
  if (response.status !== 200) return undefined;
  return { id: held.id, token: String((await json(response)).token) };
}

/** The application refreshes a token; the new one, or nothing when its family is gone. */
async function refresh(held: Held): Promise<Held | undefined> {
  if (!held.refresh) return undefined;
  const body = await json(
    await accessTokenRequest({ grant_type: 'refresh_token', refresh_token: held.refresh }),
  );
  return body.access_token
    ? { id: held.id, token: body.access_token, refresh: body.refresh_token }
    : undefined;
}

/** Resets and refreshes one after another, each on the last token it got, recording every token. */
async function churn(start: Held, steps: number, seen: Held[]): Promise<void> {
  let held: Held | undefined = start;
  for (let step = 0; step < steps && held; step++) {
    held = held.refresh && Math.random() < 0.5 ? await refresh(held) : await reset(held);
    if (held) seen.push(held);
  }
}

const works = async (token: string) =>
  (await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } })).status === 200;

/** The token hashes the user sees in GET /authorizations. */
async function listed(user: User): Promise<Set<string>> {
  const response = await fetch(`${stack.baseUrl}/authorizations?per_page=100`, {
    headers: { Authorization: user.auth },
  });
  expect(response.status).toBe(200);
  const body: Array<{ hashed_token: string }> = await json(response);
  return new Set(body.map((a) => a.hashed_token));
}

async function revokeGrant(user: User, way: number, live: Held | undefined): Promise<void> {
  if (way === 0 && live) {
    // The application revokes its own grant, with a token it holds (404 once that token is gone).
    const response = await fetch(`${stack.baseUrl}/applications/${app.clientId}/grants/${live.token}`, {
      method: 'DELETE',
      headers: { Authorization: app.basic },
    });
    if (response.status === 204) return;
  }
  if (way === 1) {
    await user.browser.get(`/settings/connections/applications/${app.clientId}`);
    const response = await user.browser.post(`/settings/connections/applications/${app.clientId}/revoke`, {});
    expect(response.status).toBe(303);
    return;
  }
  const grants = await json(
    await fetch(`${stack.baseUrl}/applications/grants`, { headers: { Authorization: user.auth } }),
  );
  for (const grant of grants as Array<{ id: number; app: { client_id: string } }>)
    if (grant.app.client_id === app.clientId)
      await fetch(`${stack.baseUrl}/applications/grants/${grant.id}`, {
        method: 'DELETE',
        headers: { Authorization: user.auth },
      });
}

interface Tally {
  /** Tokens answering 200 that GET /authorizations does not list. */
  unlisted: number;
  /** Tokens of authorizations from before a revocation answering 200 after it. */
  survivors: number;
}

async function round(index: number, tally: Tally): Promise<void> {
  const user = await signedUpUser(stack.webUrl, `racer-${index}`);
  // Ten tokens: the limit. Exchanged ones carry refresh tokens; the user makes two of them.
  const held: Held[] = [];
  for (let i = 0; i < 8; i++) {
    const got = await exchange(await codeFrom(user.browser));
    if (got) held.push(got);
  }
  for (let i = 0; i < 2; i++) {
    const got = await userCreates(user);
    if (got) held.push(got);
  }
  const codes = [await codeFrom(user.browser), await codeFrom(user.browser), await codeFrom(user.browser)];
  const seen: Held[] = [...held];

  // Phase 1: resets and refreshes of the oldest tokens (the limit's next victims) against new
  // exchanges and user creations (which evict them) and the user's deletions.
  const oldest = held.slice(0, 6);
  await Promise.all([
    ...oldest.map((h) => churn(h, 3, seen)),
    ...codes.map(async (code) => {
      const got = await exchange(code);
      if (got) seen.push(got);
    }),
    ...[0, 1].map(async () => {
      const got = await userCreates(user);
      if (got) seen.push(got);
    }),
    ...pick(held, 3).map((h) =>
      fetch(`${stack.baseUrl}/authorizations/${h.id}`, {
        method: 'DELETE',
        headers: { Authorization: user.auth },
      }),
    ),
  ]);
  let list = await listed(user);
  for (const h of seen) if (!list.has(sha256(h.token)) && (await works(h.token))) tally.unlisted++;

  // Phase 2: a revocation against resets, refreshes, exchanges of codes issued before it and
  // the user's own creations.
  const alive = [];
  for (const h of seen) if (list.has(sha256(h.token))) alive.push(h);
  const outstanding = [await codeFrom(user.browser), await codeFrom(user.browser)];
  const created: Held[] = [];
  const last = alive.at(-1);
  await Promise.all([
    revokeGrant(user, index % 3, last),
    ...alive.filter((h) => h !== last).map((h) => churn(h, 2, seen)),
    ...outstanding.map(async (code) => {
      const got = await exchange(code);
      if (got) seen.push(got);
    }),
    (async () => {
      const got = await userCreates(user);
      if (got) created.push(got);
    })(),
  ]);
  list = await listed(user);
  for (const h of [...seen, ...created]) {
    if (!(await works(h.token))) continue;
    if (!list.has(sha256(h.token))) tally.unlisted++;
    // Only a token the user created during the revocation may outlive it (it came after).
    if (!created.includes(h)) tally.survivors++;
  }
}

describe('revocation under concurrent resets, refreshes and creations', () => {
  it('leaves every working token listed, and no token of the application working after a revocation', async () => {
    const tally: Tally = { unlisted: 0, survivors: 0 };
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL_ROUNDS }, async () => {
        while (next < ROUNDS) await round(next++, tally);
      }),
    );
    expect(tally, `over ${ROUNDS} rounds`).toEqual({ unlisted: 0, survivors: 0 });
  }, 240_000);
});
