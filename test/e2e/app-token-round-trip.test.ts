import { randomInt } from 'node:crypto';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countDynamoDbCalls } from '#bench/support';
import { type CommandInput, describeCall } from '#bench/tokens';
import { createApp as storeApp } from '#data/apps';
import { createAuthorization } from '#data/authorizations';
import { db, tableName } from '#data/client';
import { appKey, appStateKey } from '#data/keys';
import { appTag } from '#domain/app-tag';
import { hashSecret } from '#domain/apps';
import { TOKENS_PER_SCOPE_SET } from '#domain/authorizations';
import { BASE62 } from '#domain/base62';
import { formatToken, hashToken, lastEight } from '#domain/tokens';
import { admin } from '#test/admin';
import { createApp, createUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';

/*
 * An OAuth application's token authenticates in one DynamoDB round trip: its lookup and its
 * application's suspension state are read in one strongly consistent BatchGetItem, the state item
 * being named by the tag the token carries. Suspension still stops the token on the very next
 * request. The handlers run in this process and share its DocumentClient: every call they make is
 * counted there.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let user: Awaited<ReturnType<typeof createUser>>;
let counter: ReturnType<typeof countDynamoDbCalls<string>>;

const ONE_ROUND_TRIP = ['BatchGetItem [TOKEN/TOKEN, APPSTATE/APPSTATE] strong'];
const WITH_APP_READ = [...ONE_ROUND_TRIP, 'GetItem APP/APP strong'];

beforeAll(async () => {
  stack = await startTestStack();
  user = await createUser(stack.endpointsFile, 'roundtrip');
  counter = countDynamoDbCalls(db(), (command, input) => describeCall(command, input as CommandInput));
});
afterAll(async () => {
  counter?.remove();
  await stack?.stop();
});
beforeEach(() => void counter.take());

/** `GET /user` with the token: its status and the DynamoDB calls it made, in order. */
async function getUser(token: string): Promise<{ status: number; calls: string[] }> {
  counter.take();
  const response = await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } });
  await response.arrayBuffer();
  return { status: response.status, calls: counter.take() };
}

/** The token's first request also records "last used" (once an hour): the next ones are steady state. */
async function steady(token: string): Promise<void> {
  expect((await getUser(token)).status).toBe(200);
}

/** An OAuth app token minted by the service (POST /authorizations with the app's credentials). */
async function appToken(clientId: string, clientSecret: string): Promise<string> {
  const response = await fetch(`${stack.baseUrl}/authorizations`, {
    method: 'POST',
    headers: { Authorization: user.auth },
    body: JSON.stringify({
      note: `app token ${Math.random()}`,
      client_id: clientId,
      client_secret: clientSecret,
    }),
  });
  expect(response.status).toBe(201);
  return ((await json(response)) as { token: string }).token;
}

const suspend = async (clientId: string) =>
  expect((await admin(stack.endpointsFile, 'app', 'suspend', clientId)).code).toBe(0);
const unsuspend = async (clientId: string) =>
  expect((await admin(stack.endpointsFile, 'app', 'unsuspend', clientId)).code).toBe(0);

describe('an OAuth app token', () => {
  it('authenticates a request in one DynamoDB call, as a personal token does', async () => {
    const app = await createApp(stack.endpointsFile, 'roundtrip', 'One Trip');
    const token = await appToken(app.clientId, app.clientSecret);
    expect(token.slice(4, 10)).toBe(appTag(app.clientId));
    await steady(token);

    const { status, calls } = await getUser(token);

    expect(status).toBe(200);
    expect(calls).toEqual(ONE_ROUND_TRIP);
  });

  it('stops on the very next request after its application is suspended, and works again after reinstatement', async () => {
    const app = await createApp(stack.endpointsFile, 'roundtrip', 'Suspended Soon');
    const token = await appToken(app.clientId, app.clientSecret);
    await steady(token);

    await suspend(app.clientId);
    expect(await getUser(token)).toEqual({ status: 401, calls: ONE_ROUND_TRIP });

    await unsuspend(app.clientId);
    expect(await getUser(token)).toEqual({ status: 200, calls: ONE_ROUND_TRIP });
  });
});

describe('tokens and applications from before the tag', () => {
  /** A `gho_` token in the format minted before tags: 30 random characters, checksum, as before. */
  async function legacyToken(clientId: string): Promise<string> {
    let body = '';
    do {
      body = Array.from({ length: 30 }, () => BASE62[randomInt(62)]).join('');
    } while (body.startsWith(appTag(clientId)));
    const token = formatToken('oauth', body);
    const created = await createAuthorization({
      login: user.login,
      clientId,
      scopes: [],
      note: null,
      noteUrl: null,
      fingerprint: null,
      tokenHash: hashToken(token),
      tokenLastEight: lastEight(token),
      claimFingerprint: false,
      limit: TOKENS_PER_SCOPE_SET,
    });
    expect(created.kind).toBe('created');
    return token;
  }

  it('a token without its application tag still works, reads its application, and honours suspension', async () => {
    const app = await createApp(stack.endpointsFile, 'roundtrip', 'Older Tokens');
    const token = await legacyToken(app.clientId);
    await steady(token);

    expect(await getUser(token)).toEqual({ status: 200, calls: WITH_APP_READ });
    await suspend(app.clientId);
    expect(await getUser(token)).toEqual({ status: 401, calls: WITH_APP_READ });
    await unsuspend(app.clientId);
    expect(await getUser(token)).toEqual({ status: 200, calls: WITH_APP_READ });
  });

  it('a tagged token of an application whose state item does not list it is checked on the application', async () => {
    // Prepare: an application as it was before state items, suspended by a writer that knows
    // nothing of them (the item alone says so).
    const app = await createApp(stack.endpointsFile, 'roundtrip', 'Older App');
    const token = await appToken(app.clientId, app.clientSecret);
    await steady(token);
    await db().send(new DeleteCommand({ TableName: tableName(), Key: appStateKey(appTag(app.clientId)) }));
    expect(await getUser(token)).toEqual({ status: 200, calls: WITH_APP_READ });

    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: appKey(app.clientId),
        UpdateExpression: 'SET suspended = :on',
        ExpressionAttributeValues: { ':on': true },
      }),
    );

    // Assess: refused; and once suspended through the service, the state item speaks for it.
    expect(await getUser(token)).toEqual({ status: 401, calls: WITH_APP_READ });
    await unsuspend(app.clientId);
    expect(await getUser(token)).toEqual({ status: 200, calls: ONE_ROUND_TRIP });
  });
});

describe('applications sharing a tag', () => {
  // Two client ids whose SHA-256 share the first 6 base62 digits (found by a birthday search).
  const FIRST = 'c0111de000000002df05';
  const SECOND = 'c0111de0000000031755';

  it('neither leak their suspension to each other nor hide each other’s', async () => {
    expect(appTag(FIRST)).toBe(appTag(SECOND));
    const tokens: Record<string, string> = {};
    for (const clientId of [FIRST, SECOND]) {
      const secret = `${clientId}${'5'.repeat(20)}`;
      await storeApp({
        clientId,
        secretHash: hashSecret(secret),
        ownerLogin: user.login,
        name: `Shared tag ${clientId}`,
        url: 'https://app.example',
        callbackUrl: 'https://app.example/callback',
      });
      tokens[clientId] = await appToken(clientId, secret);
      await steady(tokens[clientId] as string);
    }
    const first = tokens[FIRST] as string;
    const second = tokens[SECOND] as string;

    await suspend(FIRST);
    expect(await getUser(first)).toEqual({ status: 401, calls: ONE_ROUND_TRIP });
    expect(await getUser(second)).toEqual({ status: 200, calls: ONE_ROUND_TRIP });

    await suspend(SECOND);
    await unsuspend(FIRST);
    expect(await getUser(first)).toEqual({ status: 200, calls: ONE_ROUND_TRIP });
    expect(await getUser(second)).toEqual({ status: 401, calls: ONE_ROUND_TRIP });

    await unsuspend(SECOND);
    expect(await getUser(second)).toEqual({ status: 200, calls: ONE_ROUND_TRIP });
  });
});
