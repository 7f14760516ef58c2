import { createHash } from 'node:crypto';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeKey } from '#data/keys';
import { localDynamoDbClient } from '#local/dynamodb-local';
import { createApp, createUser, signedUpUser } from '#test/fixtures';
import { json, startTestStack } from '#test/stack';
import { authorizedCode, type WebClient } from '#test/web-client';

/**
 * The 10-token limit per user, application and scope set under concurrent code exchanges, over
 * HTTP against DynamoDB Local: good exchanges race with failing ones (codes reused, the same code
 * exchanged by four requests at once, wrong redirect_uri, wrong secret, expired codes) for one user who
 * is already at the limit. Afterwards at most ten of the tokens handed out answer `GET /user`, at
 * most ten are listed for the application, and every token that works is listed. Each round is a
 * new user; the violations are summed over all rounds and must be none.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type App = Awaited<ReturnType<typeof createApp>>;
let stack: Stack;
let app: App;
let documents: DynamoDBDocumentClient;

const ROUNDS = 12;
const PARALLEL_ROUNDS = 2;
const SCOPE = 'gist';
const LIMIT = 10;
const GOOD = 16;
const RACED = 10;
const RACERS = 4;

beforeAll(async () => {
  stack = await startTestStack();
  await createUser(stack.endpointsFile, 'ringer');
  app = await createApp(stack.endpointsFile, 'ringer', 'Ring App');
  documents = DynamoDBDocumentClient.from(localDynamoDbClient(stack.dynamodbEndpoint));
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

const codeFrom = (browser: WebClient) => authorizedCode(browser, app.clientId, SCOPE);

/** Exchanges a code; the access token, or undefined when the exchange failed. */
async function exchange(code: string, fields: Record<string, string> = {}): Promise<string | undefined> {
  const response = await fetch(`${stack.webUrl}/login/oauth/access_token`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, code, ...fields }),
  });
  expect(response.status).toBeLessThan(500);
  const body = await json(response);
  return typeof body.access_token === 'string' ? body.access_token : undefined;
}

async function expire(code: string): Promise<void> {
  await documents.send(
    new UpdateCommand({
      TableName: stack.tableName,
      Key: codeKey(sha256(code)),
      UpdateExpression: 'SET expiresAt = :past',
      ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
    }),
  );
}

const works = async (token: string) =>
  (await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: `token ${token}` } })).status === 200;

interface Tally {
  /** Rounds where more than ten tokens of the user, application and scope set answered 200. */
  overWorking: number;
  /** Rounds where GET /authorizations listed more than ten for the application. */
  overListed: number;
  /** Tokens answering 200 that GET /authorizations does not list. */
  unlisted: number;
  /** The most tokens that worked at once after a round. */
  mostWorking: number;
}

async function round(index: number, tally: Tally): Promise<void> {
  const user = await signedUpUser(stack.webUrl, `ringer-${index}`);
  // The first code asks for consent; once granted, every authorize request answers a code at once.
  const tokens: string[] = [(await exchange(await codeFrom(user.browser))) ?? ''];
  const codes = (count: number) => Promise.all(Array.from({ length: count }, () => codeFrom(user.browser)));
  const [prefill, good, raced, reused, wrongRedirect, wrongSecret, expired] = await Promise.all([
    codes(LIMIT - 1),
    codes(GOOD),
    codes(RACED),
    codes(2),
    codes(2),
    codes(2),
    codes(2),
  ]);
  // At the limit before the race: every good exchange must now revoke one.
  for (const token of await Promise.all([...prefill, ...reused].map((code) => exchange(code))))
    tokens.push(token ?? '');
  await Promise.all(expired.map(expire));

  const exchanges: Array<() => Promise<string | undefined>> = [
    ...good.map((code) => () => exchange(code)),
    ...raced.flatMap((code) => Array.from({ length: RACERS }, () => () => exchange(code))),
    ...reused.map((code) => () => exchange(code)),
    ...wrongRedirect.map((code) => () => exchange(code, { redirect_uri: 'https://elsewhere.example/cb' })),
    ...wrongSecret.map(
      (code) => () => exchange(code, { client_secret: `${app.clientSecret.slice(0, -1)}x` }),
    ),
    ...expired.map((code) => () => exchange(code)),
  ];
  // Started in a shuffled order, so that failing and good exchanges interleave differently in
  // every round.
  const started = exchanges.sort(() => Math.random() - 0.5).map((start) => start());
  for (const token of await Promise.all(started)) if (token) tokens.push(token);

  const response = await fetch(`${stack.baseUrl}/authorizations?per_page=100`, {
    headers: { Authorization: user.auth },
  });
  expect(response.status).toBe(200);
  const body: Array<{ hashed_token: string; app: { client_id: string } }> = await json(response);
  const listed = new Set(body.filter((a) => a.app.client_id === app.clientId).map((a) => a.hashed_token));
  let working = 0;
  for (const token of tokens) {
    if (!token || !(await works(token))) continue;
    working++;
    if (!listed.has(sha256(token))) tally.unlisted++;
  }
  if (working > LIMIT) tally.overWorking++;
  if (listed.size > LIMIT) tally.overListed++;
  tally.mostWorking = Math.max(tally.mostWorking, working);
}

describe('the 10-token limit under concurrent good and failing code exchanges', () => {
  it('keeps at most ten working tokens per user, application and scope set, each of them listed', async () => {
    const tally: Tally = { overWorking: 0, overListed: 0, unlisted: 0, mostWorking: 0 };
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL_ROUNDS }, async () => {
        while (next < ROUNDS) await round(next++, tally);
      }),
    );
    expect(tally, `over ${ROUNDS} rounds`).toEqual({
      overWorking: 0,
      overListed: 0,
      unlisted: 0,
      mostWorking: expect.any(Number),
    });
    expect(tally.mostWorking).toBeLessThanOrEqual(LIMIT);
  }, 120_000);
});
