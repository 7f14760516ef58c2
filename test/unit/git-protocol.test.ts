import { describe, expect, it } from 'vitest';
import { BINARY_MEDIA_TYPES, isBinaryMediaType } from '#shared/binary-media';
import { parseCgiResponse } from '#vcs/http-backend';

describe('binary media types', () => {
  it('match Git and LFS bodies by type/subtype, ignoring parameters and case', () => {
    expect(isBinaryMediaType('application/x-git-receive-pack-request')).toBe(true);
    expect(isBinaryMediaType('Application/Octet-Stream; charset=binary')).toBe(true);
    expect(isBinaryMediaType('application/json')).toBe(false);
    expect(isBinaryMediaType('application/x-www-form-urlencoded')).toBe(false);
    expect(isBinaryMediaType(undefined)).toBe(false);
    expect(isBinaryMediaType('image/png', ['image/*'])).toBe(true);
    expect(BINARY_MEDIA_TYPES).not.toContain('*/*');
  });
});

describe('CGI responses of git http-backend', () => {
  it('split into status, headers and a binary body', () => {
    const body = Buffer.from([0, 1, 2, 13, 10, 13, 10, 255]);
    const parsed = parseCgiResponse(
      Buffer.concat([Buffer.from('Status: 403 Forbidden\r\nContent-Type: text/plain\r\n\r\n'), body]),
    );
    expect(parsed.status).toBe(403);
    expect(parsed.headers).toEqual({ 'Content-Type': 'text/plain' });
    expect(parsed.body.equals(body)).toBe(true);
  });

  it('default to 200 and accept bare newlines', () => {
    const parsed = parseCgiResponse(
      Buffer.from('Expires: Fri, 01 Jan 1980 00:00:00 GMT\nContent-Type: x\n\n0000'),
    );
    expect(parsed.status).toBe(200);
    expect(parsed.headers['Content-Type']).toBe('x');
    expect(parsed.body.toString()).toBe('0000');
  });

  it('refuse output without a header block', () => {
    expect(() => parseCgiResponse(Buffer.from('garbage'))).toThrow(/header/);
  });
});
