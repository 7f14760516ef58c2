import { describe, expect, it } from 'vitest';
import { isSitePath, safeReturnTo } from '#domain/return-to';

const HOME = '/home';

describe('safeReturnTo', () => {
  it.each([
    ['/settings/tokens', '/settings/tokens'],
    ['/login/oauth/authorize?client_id=x&state=a%2Fb', '/login/oauth/authorize?client_id=x&state=a%2Fb'],
    ['/a/./b/../c', '/a/c'],
    ['/a/..//', HOME],
  ])('keeps a same-site path %j as %j', (value, expected) => {
    expect(safeReturnTo(value, HOME)).toBe(expected);
  });

  it.each([
    '//evil.example/x',
    '/.//evil.example/x',
    '/..//evil.example/x',
    '/%2e//evil.example/x',
    '/%2E%2E//evil.example/x',
    '/a/..//evil.example/x',
    '/a/b/../..//evil.example/x',
    '/\\evil.example',
    '/.\\/evil.example',
    '/%5cevil.example',
    '/%2f%2fevil.example',
    '/%2F/evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    '/.\r//evil.example',
    'https://evil.example/',
    'javascript:alert(1)',
    ' /x',
    '',
    undefined,
    null,
  ])('refuses %j', (value) => {
    expect(safeReturnTo(value, HOME)).toBe(HOME);
  });

  it('only ever returns a site path', () => {
    for (const value of ['/', '/x?y=//z', '/%2e%2e/%2e%2e/', '/;//evil', '/.;//evil'])
      expect(isSitePath(safeReturnTo(value, HOME))).toBe(true);
  });
});

describe('isSitePath', () => {
  it.each(['/x', '/', '/a?b=//c'])('accepts %j', (path) => expect(isSitePath(path)).toBe(true));
  it.each(['//x', '/\\x', 'x', '/a b', '/a\tb', ''])('refuses %j', (path) =>
    expect(isSitePath(path)).toBe(false),
  );
});
