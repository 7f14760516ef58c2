import { describe, expect, it } from 'vitest';
import { hashSecret, isAcceptableAppUrl, newClientId, newClientSecret, secretMatches } from '#domain/apps';
import { hashPassword, isAcceptablePassword, needsRehash, verifyPassword } from '#domain/passwords';
import { canRead, isValidRepositoryName, type Repository } from '#domain/repositories';
import { isValidLogin } from '#domain/users';

describe('logins', () => {
  it.each(['octocat', 'a', 'mona-lisa', 'x1-2-3', 'A'.repeat(39)])('accepts %s', (login) => {
    expect(isValidLogin(login)).toBe(true);
  });
  it.each(['', '-a', 'a-', 'a--b', 'a_b', 'a.b', 'A'.repeat(40), 'ü'])('rejects %j', (login) => {
    expect(isValidLogin(login)).toBe(false);
  });
});

describe('repository names', () => {
  it('accepts GitHub names and rejects reserved or odd ones', () => {
    expect(isValidRepositoryName('hello-world.js_2')).toBe(true);
    for (const bad of ['', '.', '..', 'a/b', 'a b', 'x.git', 'r'.repeat(101)])
      expect(isValidRepositoryName(bad)).toBe(false);
  });

  it('lets only the owner read a private repository', () => {
    const repo = { ownerLogin: 'Octocat', private: true } as Repository;
    expect(canRead(repo, 'octocat')).toBe(true);
    expect(canRead(repo, 'hubot')).toBe(false);
    expect(canRead(repo, undefined)).toBe(false);
    expect(canRead({ ...repo, private: false }, undefined)).toBe(true);
  });
});

describe('passwords', () => {
  it('verifies the right password only, with a salted hash', async () => {
    const hash = await hashPassword('correct horse 1');
    expect(hash).toMatch(/^scrypt\$16384\$8\$5\$/);
    expect(needsRehash(hash)).toBe(false);
    expect(await hashPassword('correct horse 1')).not.toBe(hash);
    expect(await verifyPassword('correct horse 1', hash)).toBe(true);
    expect(await verifyPassword('correct horse 2', hash)).toBe(false);
  });

  it('asks for a rehash of hashes made with other parameters', () => {
    expect(needsRehash('scrypt$16384$8$1$c2FsdA==$aGFzaA==')).toBe(true);
    expect(needsRehash('scrypt$8192$8$10$c2FsdA==$aGFzaA==')).toBe(true);
    expect(needsRehash('bcrypt$whatever')).toBe(true);
  });

  it('refuses when there is no stored hash', async () => {
    expect(await verifyPassword('anything', undefined)).toBe(false);
  });

  it('applies GitHub strength rule', () => {
    expect(isAcceptablePassword('abcdefg1')).toBe(true);
    expect(isAcceptablePassword('abcdefgh')).toBe(false);
    expect(isAcceptablePassword('ABCDEFGHIJKLMNOP')).toBe(true);
  });
});

describe('application credentials', () => {
  it('has GitHub lengths and matches secrets by hash', () => {
    expect(newClientId()).toMatch(/^[0-9a-f]{20}$/);
    const secret = newClientSecret();
    expect(secret).toMatch(/^[0-9a-f]{40}$/);
    expect(secretMatches(secret, hashSecret(secret))).toBe(true);
    expect(secretMatches(newClientSecret(), hashSecret(secret))).toBe(false);
  });

  it('accepts only absolute http(s) URLs without credentials', () => {
    expect(isAcceptableAppUrl('https://example.com/cb')).toBe(true);
    for (const bad of [
      'javascript:alert(1)',
      '/relative',
      'https://u:p@example.com/',
      'https://e.com/#x',
      'nope',
    ]) {
      expect(isAcceptableAppUrl(bad)).toBe(false);
    }
  });
});
