import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Token format, like GitHub's since 2021 so that secret scanners recognise leaked tokens:
 * `<prefix>_<30 random base62 characters><6 base62 characters of the CRC-32 of those 30>`, 40
 * characters in all. `gho_` is an OAuth application's token, `ghp_` a personal access token. The
 * 30 random characters carry 178 bits from the CSPRNG; the checksum lets a scanner (or
 * `hasValidChecksum`) reject random look-alikes without a database lookup. The checksum is the
 * standard CRC-32 (IEEE 802.3, as zlib computes it) of the 30 characters, in base62.
 */
export type TokenKind = 'oauth' | 'personal' | 'refresh';

/** `ghr_` is a refresh token: it never authenticates a request, only buys a new user token. */
const PREFIX: Record<TokenKind, string> = { oauth: 'gho_', personal: 'ghp_', refresh: 'ghr_' };
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;

function base62(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i++) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

export function newToken(kind: TokenKind): string {
  let random = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) random += BASE62[randomInt(62)];
  return `${PREFIX[kind]}${random}${base62(crc32(random), CHECKSUM_LENGTH)}`;
}

const checksumMatches = (pattern: RegExp, token: string): boolean => {
  const match = pattern.exec(token);
  return match !== null && base62(crc32(match[1] ?? ''), CHECKSUM_LENGTH) === match[2];
};

/** True for a well-formed access token of this service (right prefix, length and checksum). */
export const hasValidChecksum = (token: string): boolean =>
  checksumMatches(/^gh[op]_([0-9A-Za-z]{30})([0-9A-Za-z]{6})$/, token);

/** True for a well-formed refresh token (`ghr_`, length and checksum): worth a database read. */
export const isWellFormedRefreshToken = (token: string): boolean =>
  checksumMatches(/^ghr_([0-9A-Za-z]{30})([0-9A-Za-z]{6})$/, token);

/** `hashed_token`: the lower-case hex SHA-256 of the token, the only form stored. */
export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export const lastEight = (token: string): string => token.slice(-8);

/** A new token with the two forms that are stored: its hash and its last eight characters. */
export function mintToken(kind: TokenKind): { token: string; tokenHash: string; tokenLastEight: string } {
  const token = newToken(kind);
  return { token, tokenHash: hashToken(token), tokenLastEight: lastEight(token) };
}
