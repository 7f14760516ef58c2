import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { APP_TAG_LENGTH, appTag } from '#domain/app-tag';
import { hasValidChecksum, mintAccessToken, newToken, tagOf } from '#domain/tokens';

/** Tokens minted by the earlier hand-written CRC-32 table: they must keep validating. */
const MINTED_BEFORE = [
  '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',
  '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',
  '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',
];

describe('token checksum', () => {
  it('is the standard CRC-32 (check value of "123456789" is 0xCBF43926)', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
  });

  it('still accepts tokens minted before, with the same base62 encoding', () => {
    for (const token of MINTED_BEFORE) expect(hasValidChecksum(token), token).toBe(true);
  });

  it('encodes the CRC-32 of the 30 random characters as 6 base62 digits, most significant first', () => {
    // CRC-32 of '123456789012345678901234567890' is 0x836BD70F = 2204882703 = '2PDSiF' in base62
    // (digits 0-9, A-Z, a-z), computed independently with Python's zlib.
    expect(hasValidChecksum('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')).toBe(true);
    expect(hasValidChecksum('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')).toBe(true);
    expect(hasValidChecksum('ghp_1234567890123456789012345678902PDSiG')).toBe(false);
    expect(hasValidChecksum('ghx_1234567890123456789012345678902PDSiF')).toBe(false);
  });

  it('rejects every single-character change to a freshly minted token', () => {
    const token = newToken('personal');
    for (let i = 4; i < token.length; i++) {
      const changed = `${token.slice(0, i)}${token[i] === 'a' ? 'b' : 'a'}${token.slice(i + 1)}`;
      expect(hasValidChecksum(changed), changed).toBe(false);
    }
  });
});

describe('application tag', () => {
  const CLIENT_ID = '0123456789abcdef0123';

  it('is 6 base62 digits of the SHA-256 of the client id, the same every time', () => {
    // SHA-256('0123456789abcdef0123') starts 0x1bd8fd472970: its first 48 bits mod 62^6 in base62
    // are '3lQVtY' (computed independently with Python's hashlib).
    expect(appTag(CLIENT_ID)).toBe('3lQVtY');
    expect(appTag(CLIENT_ID)).not.toBe(appTag('0123456789abcdef0124'));
  });

  it("opens every gho_ token of the application, which keeps GitHub's format and checksum", () => {
    const tokens = Array.from({ length: 50 }, () => newToken('oauth', CLIENT_ID));
    for (const token of tokens) {
      expect(token).toMatch(/^gho_[0-9A-Za-z]{36}$/);
      expect(hasValidChecksum(token), token).toBe(true);
      expect(tagOf(token)).toBe(appTag(CLIENT_ID));
    }
    // The other 24 characters are random: 142 bits, no two tokens alike.
    expect(new Set(tokens.map((token) => token.slice(4 + APP_TAG_LENGTH, 34))).size).toBe(50);
    expect(mintAccessToken(CLIENT_ID).token.slice(4, 10)).toBe(appTag(CLIENT_ID));
  });

  it('is not carried by personal tokens, which stay random throughout', () => {
    expect(mintAccessToken('').token).toMatch(/^ghp_/);
    expect(tagOf(newToken('personal'))).toBeUndefined();
    expect(tagOf(newToken('refresh'))).toBeUndefined();
  });
});
