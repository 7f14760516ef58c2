import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { APP_TAG_LENGTH, appTag } from './app-tag.ts';
import { BASE62, base62 } from './base62.ts';

/**
 * Token format, like GitHub's since 2021 so that secret scanners recognise leaked tokens:
 * `<prefix>_<30 base62 characters><6 base62 characters of the CRC-32 of those 30>`, 40 characters
 * in all. `gho_` is an OAuth application's token, `ghp_` a personal access token. The checksum
 * lets a scanner (or `hasValidChecksum`) reject random look-alikes without a database lookup; it
 * is the standard CRC-32 (IEEE 802.3, as zlib computes it) of the 30 characters, in base62.
 *
 * The 30 characters of a `ghp_` or `ghr_` token are random (178 bits from the CSPRNG). Those of a
 * `gho_` token start with its application's 6-character tag (`app-tag.ts`), then 24 random
 * characters (142 bits): the token names the item holding its application's suspension state, so
 * that both are read in one round trip. `gho_` tokens minted before the tag existed are random
 * throughout; their tag position matches their application's only by chance, and they are checked
 * the way they always were (see `services/authenticate.ts`).
 */
export type TokenKind = 'oauth' | 'personal' | 'refresh';

/** `ghr_` is a refresh token: it never authenticates a request, only buys a new user token. */
const PREFIX: Record<TokenKind, string> = { oauth: 'gho_', personal: 'ghp_', refresh: 'ghr_' };
const BODY_LENGTH = 30;
const CHECKSUM_LENGTH = 6;

const randomBase62 = (length: number): string => {
  let random = '';
  for (let i = 0; i < length; i++) random += BASE62[randomInt(62)];
  return random;
};

/** The token with these 30 body characters: its prefix, the body and the body's checksum. */
export const formatToken = (kind: TokenKind, body: string): string =>
  `${PREFIX[kind]}${body}${base62(crc32(body), CHECKSUM_LENGTH)}`;

export function newToken(kind: 'personal' | 'refresh'): string;
export function newToken(kind: 'oauth', clientId: string): string;
export function newToken(kind: TokenKind, clientId = ''): string {
  const tag = kind === 'oauth' ? appTag(clientId) : '';
  return formatToken(kind, tag + randomBase62(BODY_LENGTH - tag.length));
}

/** The application tag a `gho_` token carries where its minting put one; undefined for other kinds. */
export const tagOf = (token: string): string | undefined =>
  token.startsWith(PREFIX.oauth)
    ? token.slice(PREFIX.oauth.length, PREFIX.oauth.length + APP_TAG_LENGTH)
    : undefined;

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

export interface MintedToken {
  readonly token: string;
  readonly tokenHash: string;
  readonly tokenLastEight: string;
}

const minted = (token: string): MintedToken => ({
  token,
  tokenHash: hashToken(token),
  tokenLastEight: lastEight(token),
});

/** A new refresh token with the two forms that are stored: its hash and its last eight characters. */
export const mintRefreshToken = (): MintedToken => minted(newToken('refresh'));

/** A new access token for an authorization: `gho_` with the application's tag, or `ghp_` without an application. */
export const mintAccessToken = (clientId: string): MintedToken =>
  minted(clientId ? newToken('oauth', clientId) : newToken('personal'));
