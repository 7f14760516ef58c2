import { beforeAll, describe, expect, it } from 'vitest';
import { freshTable } from '#test/dynamodb';

let codes: typeof import('#data/codes');
let client: typeof import('#data/client');
const newCode = (codeHash: string) => ({
  codeHash,
  clientId: 'app',
  login: 'octocat',
  redirectUri: null,
  scopes: [],
  codeChallenge: null,
  expiresAt: Math.floor(Date.now() / 1000) + 600,
  grantGeneration: 0,
});

beforeAll(async () => {
  const table = await freshTable();
  process.env.TABLE_NAME = table.tableName;
  process.env.DYNAMODB_ENDPOINT = table.endpoint;
  codes = await import('#data/codes');
  client = await import('#data/client');
});

describe('authorization codes', () => {
  it('are claimed once, in a transaction, recording the token and its authorization', async () => {
    const hash = 'a'.repeat(64);
    await codes.putCode(newCode(hash));
    const claim = (tokenHash: string, authorizationId: number) =>
      client.transact([codes.claimCodeItem(hash, { tokenHash, authorizationId }, client.now())]);
    expect(await claim('token-1', 41)).toBe('ok');
    expect(await claim('token-2', 42)).toMatchObject({ failedIndex: 0 });
    expect(await codes.getCode(hash)).toMatchObject({ tokenHash: 'token-1', authorizationId: 41 });
    expect(
      await client.transact([
        codes.claimCodeItem('b'.repeat(64), { tokenHash: 't', authorizationId: 1 }, client.now()),
      ]),
    ).toMatchObject({ failedIndex: 0 });
  });

  it('come back with the application in one read', async () => {
    await codes.putCode(newCode('c'.repeat(64)));
    expect(await codes.getAppAndCode('no-such-app', 'c'.repeat(64))).toEqual({
      code: expect.objectContaining({ codeHash: 'c'.repeat(64), exchangedAt: null }),
    });
  });
});
