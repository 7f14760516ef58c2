import { scryptSync } from 'node:crypto';
import { DynamoDBDocumentClient, GetCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Decode, base32Encode, newTotpSecret, timeStep, totpCode } from '#domain/totp';
import { localDynamoDbClient } from '#local/dynamodb-local';
import { createUser, enableOtp } from '#test/fixtures';
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

describe('signing in over an existing session', () => {
  const signedIn = (cookie: string) =>
    fetch(`${stack.webUrl}/settings/tokens`, {
      headers: { Cookie: `session=${cookie}` },
      redirect: 'manual',
    });

  it('ends the previous session on the server when another user signs in in the same browser', async () => {
    const first = await createUser(stack.endpointsFile, 'first-user');
    const second = await createUser(stack.endpointsFile, 'second-user');
    const browser = new WebClient(stack.webUrl);
    await browser.get('/login');
    await browser.post('/login', { login: first.login, password: first.password });
    const firstCookie = browser.cookie('session') ?? '';
    expect((await signedIn(firstCookie)).status).toBe(200);

    await browser.get('/settings/tokens'); // a page with the session's form token
    const again = await browser.post('/login', { login: second.login, password: second.password });
    expect(again.status).toBe(303);
    const secondCookie = browser.cookie('session') ?? '';
    expect(secondCookie).not.toBe(firstCookie);
    expect((await signedIn(secondCookie)).status).toBe(200);

    const replay = await signedIn(firstCookie);
    expect(replay.status).toBe(302);
    expect(replay.headers.get('location')).toMatch(/^\/login\?/);
  });

  it('ends the previous session when the browser signs up a new account', async () => {
    const owner = await createUser(stack.endpointsFile, 'old-owner');
    const browser = new WebClient(stack.webUrl);
    await browser.get('/login');
    await browser.post('/login', { login: owner.login, password: owner.password });
    const oldCookie = browser.cookie('session') ?? '';
    await browser.get('/settings/tokens');
    const created = await browser.post('/signup', {
      login: 'fresh-account',
      email: 'fresh@example.com',
      password: 'long-enough-1',
    });
    expect(created.status).toBe(303);
    expect((await signedIn(oldCookie)).status).toBe(302);
  });
});

describe('password hashes', () => {
  /** The stored credential item, read as an operator would (the test owns the table). */
  const table = () => DynamoDBDocumentClient.from(localDynamoDbClient(stack.dynamodbEndpoint));
  const credentialOf = async (login: string) =>
    (
      await table().send(
        new GetCommand({ TableName: stack.tableName, Key: { PK: `USER#${login}`, SK: 'CREDENTIAL' } }),
      )
    ).Item;

  it('new accounts get N=2^14, r=8, p=5', async () => {
    await createUser(stack.endpointsFile, 'fresh-hash');
    expect(String((await credentialOf('fresh-hash'))?.passwordHash)).toMatch(/^scrypt\$16384\$8\$5\$/);
  });

  it('a hash with older parameters is replaced on the next successful sign-in, and still verifies', async () => {
    const user = await createUser(stack.endpointsFile, 'legacy-hash');
    // As the service stored it before the change: N=2^14, r=8, p=1.
    const salt = Buffer.from('0123456789abcdef');
    const key = scryptSync(user.password.normalize('NFKC'), salt, 32, { N: 16384, r: 8, p: 1 });
    const legacy = ['scrypt', 16384, 8, 1, salt.toString('base64'), key.toString('base64')].join('$');
    await table().send(
      new UpdateCommand({
        TableName: stack.tableName,
        Key: { PK: 'USER#legacy-hash', SK: 'CREDENTIAL' },
        UpdateExpression: 'SET passwordHash = :legacy',
        ExpressionAttributeValues: { ':legacy': legacy },
      }),
    );

    const wrong = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: basicAuth(user.login, 'not-the-pass-1') },
    });
    expect(wrong.status).toBe(401);
    expect((await credentialOf('legacy-hash'))?.passwordHash).toBe(legacy);

    const ok = await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: user.auth } });
    expect(ok.status).toBe(200);
    const upgraded = String((await credentialOf('legacy-hash'))?.passwordHash);
    expect(upgraded).toMatch(/^scrypt\$16384\$8\$5\$/);
    expect((await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: user.auth } })).status).toBe(
      200,
    );
  });
});

describe('TOTP seeds at rest', () => {
  const table = () => DynamoDBDocumentClient.from(localDynamoDbClient(stack.dynamodbEndpoint));
  const everyItem = async () =>
    JSON.stringify((await table().send(new ScanCommand({ TableName: stack.tableName }))).Items);
  const otpSecretOf = async (login: string) =>
    String(
      (
        await table().send(
          new GetCommand({ TableName: stack.tableName, Key: { PK: `USER#${login}`, SK: 'CREDENTIAL' } }),
        )
      ).Item?.otpSecret,
    );
  /** Every spelling of the seed an item could hold. */
  const spellings = (base32: string) => {
    const raw = base32Decode(base32);
    return [
      base32,
      base32.toLowerCase(),
      raw.toString('hex'),
      raw.toString('base64'),
      raw.toString('base64url'),
    ];
  };

  it('stores no seed after `user otp enable`, and a code still signs in', async () => {
    const user = await createUser(stack.endpointsFile, 'sealed-otp');
    const otp = await enableOtp(stack.endpointsFile, user.login);
    const items = await everyItem();
    for (const spelling of spellings(otp.secret)) expect(items).not.toContain(spelling);
    expect(await otpSecretOf('sealed-otp')).toMatch(/^sealed:v1:local:/);

    const challenge = await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: user.auth } });
    expect(challenge.status).toBe(401);
    const ok = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: user.auth, 'X-GitHub-OTP': otp.code() },
    });
    expect(ok.status).toBe(200);
  });

  it('a sealed seed copied to another user does not open for them', async () => {
    const owner = await createUser(stack.endpointsFile, 'seed-owner');
    const thief = await createUser(stack.endpointsFile, 'seed-thief');
    const otp = await enableOtp(stack.endpointsFile, owner.login);
    await table().send(
      new UpdateCommand({
        TableName: stack.tableName,
        Key: { PK: 'USER#seed-thief', SK: 'CREDENTIAL' },
        UpdateExpression: 'SET otpSecret = :sealed',
        ExpressionAttributeValues: { ':sealed': await otpSecretOf('seed-owner') },
      }),
    );
    const response = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: thief.auth, 'X-GitHub-OTP': otp.code() },
    });
    expect(response.status).toBeLessThan(500);
    expect(response.status).not.toBe(200);
  });

  it('a plaintext seed stored before sealing still works once and is sealed by that sign-in', async () => {
    const user = await createUser(stack.endpointsFile, 'legacy-otp');
    const seed = newTotpSecret();
    await table().send(
      new UpdateCommand({
        TableName: stack.tableName,
        Key: { PK: 'USER#legacy-otp', SK: 'CREDENTIAL' },
        UpdateExpression: 'SET otpSecret = :seed',
        ExpressionAttributeValues: { ':seed': seed },
      }),
    );
    const code = totpCode(seed, timeStep(Date.now()));
    const ok = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: user.auth, 'X-GitHub-OTP': code },
    });
    expect(ok.status).toBe(200);
    const stored = await otpSecretOf('legacy-otp');
    expect(stored).toMatch(/^sealed:v1:local:/);
    for (const spelling of spellings(seed)) expect(await everyItem()).not.toContain(spelling);
    const next = totpCode(base32Encode(base32Decode(seed)), timeStep(Date.now()) + 1);
    expect(
      (await fetch(`${stack.baseUrl}/user`, { headers: { Authorization: user.auth, 'X-GitHub-OTP': next } }))
        .status,
    ).toBe(200);
  });
});
