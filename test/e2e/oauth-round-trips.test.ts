import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { db } from '#data/client';
import { createApp, createUser, signedUpUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';

/**
 * The DynamoDB round trips of the OAuth web flow's hot paths, counted through the public HTTP
 * interface (the local stack runs the handlers in this process, on this process's `db()`), and
 * what the token limit leaves when exchanges for one user and application run at once.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type App = Awaited<ReturnType<typeof createApp>>;
let stack: Stack;
let app: App;

interface Call {
  readonly command: string;
  readonly actions: number;
  readonly start: number;
  end: number;
}

let calls: Call[] = [];
const MIDDLEWARE = 'testCountCalls';

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'owner');
  app = await createApp(stack.endpointsFile, 'owner', 'Round Trips', 'https://app.example/callback');
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { TransactItems?: unknown[]; Key?: { PK?: unknown } };
      const command = String(context.commandName).replace(/Command$/, '');
      const call: Call = {
        // An id reservation (a block of authorization ids) is counted apart from the flow's own calls.
        command: String(input.Key?.PK).startsWith('COUNTER#') ? `${command} (id block)` : command,
        actions: input.TransactItems?.length ?? 1,
        start: performance.now(),
        end: Number.POSITIVE_INFINITY,
      };
      calls.push(call);
      try {
        return await next(args);
      } finally {
        call.end = performance.now();
      }
    },
    { step: 'initialize', name: MIDDLEWARE },
  );
});
afterAll(async () => {
  db().middlewareStack.remove(MIDDLEWARE);
  await stack?.stop();
});
afterEach(() => {
  calls = [];
});

/** The calls of `act`, and how many of them ran one after another at most (calls sent together count once). */
async function counted<T>(act: () => Promise<T>) {
  calls = [];
  const result = await act();
  const taken = [...calls].sort((a, b) => a.start - b.start);
  calls = [];
  const depth: number[] = [];
  for (const [i, call] of taken.entries())
    depth[i] =
      1 +
      Math.max(0, ...taken.slice(0, i).map((before, j) => (before.end <= call.start ? (depth[j] ?? 0) : 0)));
  const byCommand: Record<string, number> = {};
  for (const { command } of taken) byCommand[command] = (byCommand[command] ?? 0) + 1;
  return {
    result,
    byCommand,
    total: taken.length,
    inSequence: Math.max(0, ...depth),
    actions: taken.filter((c) => c.command === 'TransactWriteItems').map((c) => c.actions),
  };
}

let users = 0;
const SCOPE = 'repo';
const authorizePath = `/login/oauth/authorize?client_id=CLIENT&scope=${SCOPE}`;

/** A signed-in user who has authorized the app once (consent form), and their first code. */
async function grantedUser() {
  const user = await signedUpUser(stack.webUrl, `rt-user-${++users}`);
  const page = await user.browser.get(authorizePath.replace('CLIENT', app.clientId));
  expect(page.status).toBe(200);
  const consent = () =>
    user.browser.post('/login/oauth/authorize', {
      client_id: app.clientId,
      scope: SCOPE,
      granted_scope: SCOPE,
      decision: 'authorize',
    });
  return { ...user, consent };
}

const codeOf = (response: Response) =>
  new URL(response.headers.get('location') ?? 'missing:', stack.webUrl).searchParams.get('code') ?? '';

async function mint(user: Awaited<ReturnType<typeof grantedUser>>): Promise<string> {
  const response = await user.browser.get(authorizePath.replace('CLIENT', app.clientId));
  expect(response.status).toBe(302);
  return codeOf(response);
}

async function exchange(code: string): Promise<{ access_token?: string; error?: string }> {
  const response = await fetch(`${stack.webUrl}/login/oauth/access_token`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_id: app.clientId, client_secret: app.clientSecret, code }),
  });
  expect(response.status).toBe(200);
  return json(response);
}

const works = async (token: string) =>
  (await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } })).status === 200;

async function appTokens(auth: string): Promise<number> {
  const list = await json(
    await fetch(`${stack.baseUrl}/authorizations`, { headers: { Authorization: auth } }),
  );
  return (list as Array<{ app: { client_id: string } }>).filter((a) => a.app.client_id === app.clientId)
    .length;
}

describe('the browser flow for a signed-in user', () => {
  it('consent (POST /login/oauth/authorize) takes at most 3 DynamoDB calls', async () => {
    const user = await grantedUser();
    const { result, total, byCommand } = await counted(() => user.consent());
    expect(result.status).toBe(303);
    expect(codeOf(result)).toMatch(/^[0-9a-f]{20,}$/);
    // The session; the user, the application and the grant's generation; the code with the
    // consent's security log entry, in one transaction.
    expect(byCommand).toEqual({ GetItem: 1, BatchGetItem: 1, TransactWriteItems: 1 });
    expect(total).toBe(3);
  });

  it('the redirect for scopes already granted (GET /login/oauth/authorize) takes at most 3 DynamoDB calls', async () => {
    const user = await grantedUser();
    expect((await exchange(codeOf(await user.consent()))).access_token).toBeTruthy();
    const { result, total, byCommand } = await counted(() => mint(user));
    expect(result).toMatch(/^[0-9a-f]{20,}$/);
    // The session; the user, the application, the grant (its token ring) and its generation; the code.
    expect(byCommand).toEqual({ GetItem: 1, BatchGetItem: 1, PutItem: 1 });
    expect(total).toBe(3);
  });
});

describe('POST /login/oauth/access_token with a code', () => {
  it('takes at most 3 DynamoDB calls in sequence, one read and one transaction, below and at the 10-token limit', async () => {
    const user = await grantedUser();
    const first = await user.consent();
    expect((await exchange(codeOf(first))).access_token).toBeTruthy();
    const seen = [];
    for (let i = 2; i <= 12; i++) {
      const code = await mint(user);
      seen.push(await counted(() => exchange(code)));
    }
    for (const [index, exchanged] of seen.entries()) {
      expect(exchanged.result.access_token, `exchange ${index + 2}`).toBeTruthy();
      // The app and the code in one read; the token ring's registration (with a block of ten
      // authorization ids reserved beside it when the last block is used up); then the one
      // transaction that spends the code and stores the token.
      const { 'UpdateItem (id block)': _block, ...flow } = exchanged.byCommand;
      expect(flow, `exchange ${index + 2}`).toEqual({
        BatchGetItem: 1,
        UpdateItem: 1,
        TransactWriteItems: 1,
      });
      expect(exchanged.inSequence, `exchange ${index + 2}`).toBe(3);
    }
    // Eleven new ids: at most two reservations.
    const reservations = seen.map((s) => s.byCommand['UpdateItem (id block)'] ?? 0);
    expect(reservations.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2);
    // Below the limit: code, authorization, lookup, generation check, grant. From the 11th on, the
    // oldest token's authorization and lookup go in the same transaction.
    expect(seen.slice(0, 8).map((s) => s.actions[0])).toEqual(Array(8).fill(5));
    expect(seen.slice(9).map((s) => s.actions[0])).toEqual(Array(2).fill(7));
    expect(await appTokens(user.auth)).toBe(10);
  });
});

describe('concurrent exchanges for one user and application', () => {
  it('all succeed with one transaction each, and the 10 newest tokens survive', async () => {
    const user = await grantedUser();
    const older = [(await exchange(codeOf(await user.consent()))).access_token ?? ''];
    for (let i = 1; i < 10; i++) older.push((await exchange(await mint(user))).access_token ?? '');
    const codes: string[] = [];
    for (let i = 0; i < 8; i++) codes.push(await mint(user));

    const { result, byCommand } = await counted(() => Promise.all(codes.map(exchange)));
    const newer = result.map((r) => r.access_token ?? '');
    expect(newer.every(Boolean)).toBe(true);
    // No exchange read, retried or was cancelled because of another.
    const { 'UpdateItem (id block)': reservations = 0, ...flow } = byCommand;
    expect(flow).toEqual({ BatchGetItem: 8, UpdateItem: 8, TransactWriteItems: 8 });
    expect(reservations).toBeLessThanOrEqual(1);
    expect(await appTokens(user.auth)).toBe(10);
    expect(await Promise.all(older.map(works))).toEqual([...Array(8).fill(false), true, true]);
    expect(await Promise.all(newer.map(works))).toEqual(Array(8).fill(true));
  });

  it('more than ten at once: all answer with a token, and exactly ten of them survive', async () => {
    const user = await grantedUser();
    const older = [(await exchange(codeOf(await user.consent()))).access_token ?? ''];
    for (let i = 1; i < 10; i++) older.push((await exchange(await mint(user))).access_token ?? '');
    const codes: string[] = [];
    for (let i = 0; i < 14; i++) codes.push(await mint(user));

    const { result, byCommand } = await counted(() => Promise.all(codes.map(exchange)));
    const newer = result.map((r) => r.access_token ?? '');
    expect(newer.every(Boolean)).toBe(true);
    // Deciding which token each one revokes never reads the user's authorizations.
    expect(byCommand.Query).toBeUndefined();
    expect(await appTokens(user.auth)).toBe(10);
    expect((await Promise.all(older.map(works))).filter(Boolean)).toEqual([]);
    expect((await Promise.all(newer.map(works))).filter(Boolean)).toHaveLength(10);
  });

  it('a code exchanged by eight clients at once gives one token, and the reuses revoke it', async () => {
    const user = await grantedUser();
    const code = codeOf(await user.consent());
    const results = await Promise.all(Array.from({ length: 8 }, () => exchange(code)));
    const issued = results.filter((r) => r.access_token);
    expect(issued).toHaveLength(1);
    expect(results.filter((r) => r.error === 'bad_verification_code')).toHaveLength(7);
    expect(await works(issued[0]?.access_token ?? '')).toBe(false);
    expect(await appTokens(user.auth)).toBe(0);
  });
});
