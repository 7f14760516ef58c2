import { describe, expect, it } from 'vitest';
import {
  checkRedirectUri,
  exchangeRedirectMatches,
  MAX_REDIRECT_URI_LENGTH,
  withQuery,
} from '#domain/redirect-uri';

const CALLBACK = 'http://example.com/path';

describe("redirect_uri rule: GitHub's table (github-behaviour §3.2, callback http://example.com/path)", () => {
  it.each(['http://example.com/path', 'http://example.com/path/subdir/other'])('GOOD %s', (uri) => {
    expect(checkRedirectUri(uri, CALLBACK)).toEqual({ ok: true, target: uri, redirectUri: uri });
  });

  it.each([
    'http://example.com/bar',
    'http://example.com/',
    'http://example.com:8080/path',
    'http://oauth.example.com:8080/path',
    'http://example.org',
  ])('BAD %s', (uri) => {
    expect(checkRedirectUri(uri, CALLBACK).ok).toBe(false);
  });
});

describe('redirect_uri rule: beyond the table', () => {
  it('uses the registered callback when redirect_uri is absent or empty', () => {
    for (const absent of [undefined, null, '']) {
      expect(checkRedirectUri(absent, 'https://app.example/cb?x=1')).toEqual({
        ok: true,
        target: 'https://app.example/cb?x=1',
        redirectUri: null,
      });
    }
  });

  it.each([
    ['a trailing slash is a sub-path', 'http://example.com/path/'],
    ['a query string is kept', 'http://example.com/path/sub?next=%2Fhome&a=b'],
    ['the default port is the same port', 'http://example.com:80/path'],
    ['scheme and host are case-insensitive', 'HTTP://EXAMPLE.COM/path/x'],
    ['a percent-encoded character that is not a separator or dot', 'http://example.com/path/a%20b'],
  ])('accepts: %s', (_, uri) => {
    expect(checkRedirectUri(uri, CALLBACK).ok).toBe(true);
  });

  it('returns the WHATWG-normalized URL', () => {
    expect(checkRedirectUri('HTTP://Example.COM:80/path/x', CALLBACK)).toEqual({
      ok: true,
      target: 'http://example.com/path/x',
      redirectUri: 'http://example.com/path/x',
    });
  });

  it.each([
    ['a sibling path that merely starts the same', 'http://example.com/path2'],
    ['a sibling path with a dash', 'http://example.com/path-evil/x'],
    ['another scheme', 'https://example.com/path'],
    ['a sub-domain (allowed by GitHub only later)', 'http://oauth.example.com/path'],
    ['another port on the same host', 'http://example.com:81/path'],
    ['a trailing dot on the host', 'http://example.com./path'],
    ['paths are case-sensitive', 'http://example.com/PATH'],
    ['a dot-dot segment', 'http://example.com/path/../other'],
    ['a dot-dot segment that stays inside', 'http://example.com/path/sub/../x'],
    ['a single-dot segment', 'http://example.com/path/./x'],
    ['an encoded dot-dot segment', 'http://example.com/path/%2e%2e/other'],
    ['an encoded dot-dot segment, upper case', 'http://example.com/path/%2E%2E/other'],
    ['a half-encoded dot-dot segment', 'http://example.com/path/.%2e/other'],
    ['another half-encoded dot-dot segment', 'http://example.com/path/%2E./other'],
    ['an encoded dot segment', 'http://example.com/path/%2e/x'],
    ['an encoded slash', 'http://example.com/path%2F..%2Fother'],
    ['an encoded slash, lower case', 'http://example.com/path/a%2fb'],
    ['an encoded backslash', 'http://example.com/path/%5C..%5Cother'],
    ['an encoded backslash, lower case', 'http://example.com/path/%5c'],
    ['a backslash in the path', 'http://example.com/path\\..\\other'],
    ['a backslash before the host ends', 'http://example.com\\@evil.example/path'],
    ['userinfo', 'http://user@example.com/path'],
    ['userinfo with a password', 'http://user:pw@example.com/path'],
    ['an empty userinfo', 'http://@example.com/path'],
    ['userinfo that hides another host', 'http://example.com:80@evil.example/path'],
    ['a fragment', 'http://example.com/path#frag'],
    ['an empty fragment', 'http://example.com/path#'],
    ['a relative URL', '/path'],
    ['a scheme-relative URL', '//example.com/path'],
    ['a javascript: URL', 'javascript:alert(1)//example.com/path'],
    ['a single slash after the scheme', 'http:/example.com/path'],
    ['no slashes after the scheme', 'http:example.com/path'],
    ['leading whitespace', ' http://example.com/path'],
    ['a newline', 'http://example.com/path\n'],
    ['a tab inside (WHATWG would drop it)', 'http://example.com/pa\tth'],
    ['a space in the path', 'http://example.com/path/a b'],
    ['a non-URL', 'not a url'],
    ['an IDN look-alike host', 'http://exämple.com/path'],
    ['a URL over the length limit', `http://example.com/path/${'a'.repeat(MAX_REDIRECT_URI_LENGTH)}`],
  ])('refuses %s', (_, uri) => {
    expect(checkRedirectUri(uri, CALLBACK).ok).toBe(false);
  });

  it('treats a callback ending in / as a directory, and / as the whole site', () => {
    expect(checkRedirectUri('http://example.com/path', 'http://example.com/path/').ok).toBe(false);
    expect(checkRedirectUri('http://example.com/path/x', 'http://example.com/path/').ok).toBe(true);
    expect(checkRedirectUri('http://example.com/anything/at/all', 'http://example.com/').ok).toBe(true);
    expect(checkRedirectUri('http://example.com', 'http://example.com').ok).toBe(true);
  });
});

describe('redirect_uri rule: loopback callbacks match on any port (RFC 8252 §7.3, GitHub)', () => {
  it.each([
    ['http://127.0.0.1', 'http://127.0.0.1:38123/'],
    ['http://127.0.0.1', 'http://127.0.0.1:1/'],
    ['http://127.0.0.1/', 'http://127.0.0.1:65535/'],
    ['http://127.0.0.1/cb', 'http://127.0.0.1:4000/cb'],
    ['http://127.0.0.1/cb', 'http://127.0.0.1:4000/cb/sub?x=1'],
    ['http://127.0.0.1:8080/cb', 'http://127.0.0.1:9090/cb'],
    ['http://127.0.0.1:8080/cb', 'http://127.0.0.1/cb'],
    ['http://[::1]/cb', 'http://[::1]:51000/cb'],
    ['http://[::1]/cb', 'http://[0:0:0:0:0:0:0:1]:51000/cb'],
    ['http://localhost/cb', 'http://localhost:51000/cb'],
    ['http://localhost/cb', 'http://LOCALHOST:51000/cb'],
  ])('callback %s accepts %s', (callback, uri) => {
    const check = checkRedirectUri(uri, callback);
    expect(check.ok).toBe(true);
    expect(check.ok && check.redirectUri).toBe(new URL(uri).href);
  });

  it.each([
    ['another path', 'http://127.0.0.1/cb', 'http://127.0.0.1:4000/other'],
    ['a sibling path that merely starts the same', 'http://127.0.0.1/cb', 'http://127.0.0.1:4000/cb2'],
    ['https for an http callback', 'http://127.0.0.1/cb', 'https://127.0.0.1:4000/cb'],
    ['another port of an https loopback callback', 'https://127.0.0.1/cb', 'https://127.0.0.1:4000/cb'],
    ['another port of an https localhost callback', 'https://localhost:8443/cb', 'https://localhost:4000/cb'],
    ['another loopback name: localhost for 127.0.0.1', 'http://127.0.0.1/cb', 'http://localhost:4000/cb'],
    ['another loopback name: 127.0.0.1 for localhost', 'http://localhost/cb', 'http://127.0.0.1:4000/cb'],
    ['another loopback name: [::1] for 127.0.0.1', 'http://127.0.0.1/cb', 'http://[::1]:4000/cb'],
    ['another loopback address', 'http://127.0.0.1/cb', 'http://127.0.0.2:4000/cb'],
    ['a name under localhost', 'http://localhost/cb', 'http://evil.localhost:4000/cb'],
    ['localhost with a trailing dot', 'http://localhost/cb', 'http://localhost.:4000/cb'],
    [
      'a host that starts like the loopback address',
      'http://127.0.0.1/cb',
      'http://127.0.0.1.evil.example:4000/cb',
    ],
    ['userinfo', 'http://127.0.0.1/cb', 'http://user@127.0.0.1:4000/cb'],
    ['userinfo that hides another host', 'http://127.0.0.1/cb', 'http://127.0.0.1:4000@evil.example/cb'],
    ['a fragment', 'http://127.0.0.1/cb', 'http://127.0.0.1:4000/cb#x'],
    ['a dot-dot segment', 'http://127.0.0.1/cb', 'http://127.0.0.1:4000/cb/../x'],
    ['an encoded slash', 'http://127.0.0.1/cb', 'http://127.0.0.1:4000/cb%2F..%2Fx'],
    ['a backslash', 'http://127.0.0.1/cb', 'http://127.0.0.1:4000\\@evil.example/cb'],
    ['a port out of range', 'http://127.0.0.1/cb', 'http://127.0.0.1:65536/cb'],
    ['another port of a non-loopback private address', 'http://10.0.0.1/cb', 'http://10.0.0.1:4000/cb'],
    ['another port of a non-loopback host', 'http://example.com/cb', 'http://example.com:4000/cb'],
  ])('refuses %s', (_, callback, uri) => {
    expect(checkRedirectUri(uri, callback).ok).toBe(false);
  });

  it('binds the port at the token endpoint: the code takes only the redirect_uri it was issued for', () => {
    const callback = 'http://127.0.0.1/cb';
    const bound = 'http://127.0.0.1:4000/cb';
    expect(exchangeRedirectMatches('http://127.0.0.1:4000/cb', bound, callback)).toBe(true);
    expect(exchangeRedirectMatches('http://127.0.0.1:4001/cb', bound, callback)).toBe(false);
  });
});

describe('redirect_uri at the token endpoint', () => {
  it('must equal the one the code was issued for', () => {
    const bound = 'http://example.com/path/sub';
    expect(exchangeRedirectMatches('http://example.com/path/sub', bound, CALLBACK)).toBe(true);
    expect(exchangeRedirectMatches('HTTP://example.com:80/path/sub', bound, CALLBACK)).toBe(true);
    expect(exchangeRedirectMatches('http://example.com/path', bound, CALLBACK)).toBe(false);
    expect(exchangeRedirectMatches(undefined, bound, CALLBACK)).toBe(false);
  });

  it('may be left out, or be any valid one, when the code was issued without one', () => {
    expect(exchangeRedirectMatches(undefined, null, CALLBACK)).toBe(true);
    expect(exchangeRedirectMatches('http://example.com/path/x', null, CALLBACK)).toBe(true);
    expect(exchangeRedirectMatches('http://example.com/other', null, CALLBACK)).toBe(false);
  });
});

describe('withQuery', () => {
  it("appends parameters, keeping the URL's own query byte for byte", () => {
    expect(withQuery('https://app.example/cb', { code: 'abc', state: 'a b&c' })).toBe(
      'https://app.example/cb?code=abc&state=a+b%26c',
    );
    expect(withQuery('https://app.example/cb?next=%2Fhome', { code: 'abc', state: null })).toBe(
      'https://app.example/cb?next=%2Fhome&code=abc',
    );
    expect(withQuery('https://app.example/cb?', { code: 'abc' })).toBe('https://app.example/cb?code=abc');
    expect(withQuery('https://app.example/cb', { state: undefined })).toBe('https://app.example/cb');
  });
});
