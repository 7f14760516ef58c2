import { beforeAll, describe, expect, it } from 'vitest';
import { freshTable } from '#test/dynamodb';

let codes: typeof import('#data/codes');
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
});

describe('authorization codes', () => {
  it('are claimed once; a released claim can be claimed again', async () => {
    await codes.putCode(newCode('a'.repeat(64)));
    expect(await codes.claimCode('a'.repeat(64), 'token-1')).toBe(true);
    expect(await codes.claimCode('a'.repeat(64), 'token-2')).toBe(false);
    await codes.releaseClaim('a'.repeat(64), 'token-1');
    expect((await codes.getCode('a'.repeat(64)))?.exchangedAt).toBeNull();
    expect(await codes.claimCode('a'.repeat(64), 'token-3')).toBe(true);
  });

  it("cannot be released by someone else's claim, or once presented again or recorded", async () => {
    await codes.putCode(newCode('b'.repeat(64)));
    await codes.claimCode('b'.repeat(64), 'token-1');
    await codes.releaseClaim('b'.repeat(64), 'token-other');
    expect((await codes.getCode('b'.repeat(64)))?.tokenHash).toBe('token-1');

    await codes.markReused('b'.repeat(64));
    await codes.releaseClaim('b'.repeat(64), 'token-1');
    expect((await codes.getCode('b'.repeat(64)))?.exchangedAt).not.toBeNull();

    await codes.putCode(newCode('c'.repeat(64)));
    await codes.claimCode('c'.repeat(64), 'token-1');
    await codes.recordExchange('c'.repeat(64), 42);
    await codes.releaseClaim('c'.repeat(64), 'token-1');
    expect((await codes.getCode('c'.repeat(64)))?.exchangedAt).not.toBeNull();
  });
});
