import { describe, expect, it } from 'vitest';
import { putRefreshTokenRequest, spendRefreshToken } from '#data/refresh-tokens';
import { isExpired } from '#domain/authorizations';
import { hasValidChecksum, isWellFormedRefreshToken, newToken } from '#domain/tokens';
import { readConfig } from '#shared/config';

describe('refresh token format', () => {
  it('is ghr_ with a checksum, and is never an access token', () => {
    const refresh = newToken('refresh');
    expect(refresh).toMatch(/^ghr_[0-9A-Za-z]{36}$/);
    expect(isWellFormedRefreshToken(refresh)).toBe(true);
    expect(hasValidChecksum(refresh)).toBe(false);
    expect(isWellFormedRefreshToken(newToken('oauth', 'c1a0b2c3d4e5f6a7b8c9'))).toBe(false);
    const flipped = `${refresh.slice(0, -1)}${refresh.endsWith('A') ? 'B' : 'A'}`;
    expect(isWellFormedRefreshToken(flipped)).toBe(false);
  });
});

describe('isExpired', () => {
  const now = Date.parse('2026-01-01T08:00:00Z');
  it('never for tokens without an expiry; from the expiry instant on for the others', () => {
    expect(isExpired({ expiresAt: null }, now)).toBe(false);
    expect(isExpired({ expiresAt: '2026-01-01T08:00:01Z' }, now)).toBe(false);
    expect(isExpired({ expiresAt: '2026-01-01T08:00:00Z' }, now)).toBe(true);
  });
});

describe('lifetimes', () => {
  it("default to GitHub's 8 hours and 6 months, and can be shortened", () => {
    expect(readConfig({ TABLE_NAME: 't' })).toMatchObject({
      userTokenSeconds: 28_800,
      refreshTokenSeconds: 15_897_600,
    });
    expect(
      readConfig({ TABLE_NAME: 't', USER_TOKEN_SECONDS: '2', REFRESH_TOKEN_SECONDS: '5' }),
    ).toMatchObject({ userTokenSeconds: 2, refreshTokenSeconds: 5 });
    expect(() => readConfig({ TABLE_NAME: 't', USER_TOKEN_SECONDS: '0' })).toThrow(/USER_TOKEN_SECONDS/);
  });
});

describe('refresh token items', () => {
  it('are stored by hash with their owner and a TTL, and spent only once', () => {
    process.env.TABLE_NAME ??= 't';
    const put = putRefreshTokenRequest(
      { tokenHash: 'abc', expiresAt: 1_800_000_000, publicClient: false },
      { login: 'octocat', clientId: 'c'.repeat(20), id: 42 },
      '2026-01-01T00:00:00Z',
    );
    expect(put.Item).toMatchObject({
      PK: 'REFRESH#abc',
      SK: 'REFRESH',
      _type: 'RefreshToken',
      login: 'octocat',
      authorizationId: 42,
      expiresAt: 1_800_000_000,
    });
    expect(JSON.stringify(put.Item)).not.toMatch(/ghr_/);
    expect(put.ConditionExpression).toBe('attribute_not_exists(PK)');
    expect(spendRefreshToken('abc', 'now').Update?.ConditionExpression).toBe(
      'attribute_exists(PK) AND attribute_not_exists(#usedAt)',
    );
  });
});
