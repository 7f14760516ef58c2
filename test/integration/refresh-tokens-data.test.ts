import { beforeAll, describe, expect, it } from 'vitest';
import { hashToken, mintAccessToken, mintRefreshToken } from '#domain/tokens';
import { freshTable } from '#test/dynamodb';

let authorizations: typeof import('#data/authorizations');
let refreshTokens: typeof import('#data/refresh-tokens');

beforeAll(async () => {
  const table = await freshTable();
  process.env.TABLE_NAME = table.tableName;
  process.env.DYNAMODB_ENDPOINT = table.endpoint;
  authorizations = await import('#data/authorizations');
  refreshTokens = await import('#data/refresh-tokens');
});

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;
const rotation = () => {
  const access = mintAccessToken('app1');
  return {
    tokenHash: access.tokenHash,
    tokenLastEight: access.tokenLastEight,
    expiresAt: '2099-01-01T00:00:00Z',
    refresh: { tokenHash: hashToken(mintRefreshToken().token), expiresAt: inAnHour(), publicClient: false },
  };
};

/** An expiring app token for `login` with its refresh token, as the code exchange stores it. */
async function issued(login: string) {
  const access = mintAccessToken('app1');
  const refresh = {
    tokenHash: hashToken(mintRefreshToken().token),
    expiresAt: inAnHour(),
    publicClient: false,
  };
  const created = await authorizations.createAuthorization({
    login,
    clientId: 'app1',
    scopes: ['gist'],
    note: null,
    noteUrl: null,
    fingerprint: null,
    tokenHash: access.tokenHash,
    tokenLastEight: access.tokenLastEight,
    expiresAt: '2099-01-01T00:00:00Z',
    refresh,
    claimFingerprint: false,
    limit: 10,
  });
  if (created.kind !== 'created') throw new Error(created.kind);
  const stored = await refreshTokens.getRefreshToken(refresh.tokenHash);
  if (!stored) throw new Error('refresh token not stored');
  return { authorization: created.authorization, stored };
}

describe('refresh token rotation', () => {
  it('of 8 concurrent rotations with one refresh token exactly one commits; the others see a reuse', async () => {
    const { authorization, stored } = await issued('alice');
    const results = await Promise.all(
      Array.from({ length: 8 }, () => refreshTokens.rotateRefreshToken(stored, rotation())),
    );
    const rotated = results.filter((r) => r.kind === 'rotated');
    expect(rotated).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'reused')).toHaveLength(7);
    const winner = rotated[0]?.kind === 'rotated' ? rotated[0].authorization : undefined;
    expect(winner?.id).toBe(authorization.id);
    expect(await authorizations.lookupToken(authorization.tokenHash)).toBeUndefined();
    expect((await authorizations.lookupToken(winner?.tokenHash ?? ''))?.authorization.expiresAt).toBe(
      '2099-01-01T00:00:00Z',
    );
    expect((await refreshTokens.getRefreshToken(stored.tokenHash))?.usedAt).not.toBeNull();
  });

  it("a revoked authorization's refresh token is gone", async () => {
    const { authorization, stored } = await issued('bob');
    await authorizations.deleteAuthorization('bob', authorization.id);
    expect((await refreshTokens.rotateRefreshToken(stored, rotation())).kind).toBe('gone');
  });
});
