import { describe, expect, it } from 'vitest';
import { linkHeader, pageOf, pageRequest } from '#domain/pagination';
import { expand, invalidScopes, normalizeScopes, type Scope, satisfies } from '#domain/scopes';
import { hashToken, hasValidChecksum, lastEight, newToken } from '#domain/tokens';

describe('scopes', () => {
  it('drop scopes implied by another requested scope (spec: user, gist, user:email → user, gist)', () => {
    expect(normalizeScopes(['user', 'gist', 'user:email'])).toEqual(['gist', 'user']);
    expect(normalizeScopes(['admin:public_key', 'read:public_key', 'write:public_key'])).toEqual([
      'admin:public_key',
    ]);
    expect(normalizeScopes(['repo', 'public_repo', 'repo:status', 'repo'])).toEqual(['repo']);
    expect(normalizeScopes([])).toEqual([]);
  });

  it('close implications transitively', () => {
    expect(expand('admin:org')).toEqual(new Set<Scope>(['admin:org', 'write:org', 'read:org']));
  });

  it('name the invalid ones', () => {
    expect(invalidScopes(['user', 'nope', 'repo,gist', 'nope'])).toEqual(['nope', 'repo,gist']);
  });

  it('let a broader scope satisfy a narrower accepted one, never the reverse', () => {
    expect(satisfies(['repo'], ['public_repo'])).toBe(true);
    expect(satisfies(['public_repo'], ['repo'])).toBe(false);
    expect(satisfies([], ['read:public_key'])).toBe(false);
    expect(satisfies([], [])).toBe(true);
  });
});

describe('tokens', () => {
  it('are 40 characters with a prefix and a checksum scanners can verify', () => {
    const oauth = newToken('oauth', 'c1a0b2c3d4e5f6a7b8c9');
    const personal = newToken('personal');
    expect(oauth).toMatch(/^gho_[0-9A-Za-z]{36}$/);
    expect(personal).toMatch(/^ghp_[0-9A-Za-z]{36}$/);
    expect(hasValidChecksum(oauth)).toBe(true);
    const tampered = `${oauth.slice(0, 10)}${oauth[10] === 'a' ? 'b' : 'a'}${oauth.slice(11)}`;
    expect(hasValidChecksum(tampered)).toBe(false);
    expect(new Set(Array.from({ length: 200 }, () => newToken('oauth', 'c1a0b2c3d4e5f6a7b8c9'))).size).toBe(
      200,
    );
  });

  it('hash to lower-case hex SHA-256 (GitHub example) and expose the last eight', () => {
    expect(hashToken('eef705f503b4053517ac55a99206feece1e48fab')).toBe(
      'f41b865a3aa1ec9af88fcfaee7770f02953eaf1039a8d817fe098312fa1a57eb',
    );
    expect(lastEight('eef705f503b4053517ac55a99206feece1e48fab')).toBe('e1e48fab');
  });
});

describe('pagination', () => {
  it('defaults to page 1 of 30 and caps per_page at 100', () => {
    expect(pageRequest({})).toEqual({ page: 1, perPage: 30, perPageGiven: false });
    expect(pageRequest({ page: '3', per_page: '500' })).toEqual({
      page: 3,
      perPage: 100,
      perPageGiven: true,
    });
    expect(pageRequest({ page: '0', per_page: 'x' })).toEqual({ page: 1, perPage: 30, perPageGiven: false });
  });

  it('slices the page', () => {
    expect(pageOf([1, 2, 3, 4, 5], { page: 2, perPage: 2, perPageGiven: true })).toEqual([3, 4]);
  });

  it('writes next, last, first, prev and echoes a given per_page', () => {
    const url = 'http://h/api/v3/authorizations';
    expect(linkHeader(url, 10, pageRequest({}))).toBeUndefined();
    expect(linkHeader(url, 31, pageRequest({}))).toBe(
      '<http://h/api/v3/authorizations?page=2>; rel="next", <http://h/api/v3/authorizations?page=2>; rel="last"',
    );
    expect(linkHeader(url, 50, pageRequest({ page: '3', per_page: '10' }))).toBe(
      [
        '<http://h/api/v3/authorizations?per_page=10&page=4>; rel="next"',
        '<http://h/api/v3/authorizations?per_page=10&page=5>; rel="last"',
        '<http://h/api/v3/authorizations?per_page=10&page=1>; rel="first"',
        '<http://h/api/v3/authorizations?per_page=10&page=2>; rel="prev"',
      ].join(', '),
    );
  });
});
