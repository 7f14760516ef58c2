import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The credential an LFS batch answer puts in an action's header (`Authorization: RemoteAuth
 * <token>`, as GitHub's), instead of the caller's own: it lets its holder do one operation on one
 * object of one repository until it expires, and nothing else.
 *
 * The token is `<expiry in ms since the epoch>.<HMAC-SHA256, base64url>`. The MAC covers the
 * expiry and the grant (operation, repository id, oid), which the object route knows from the
 * request it serves; so the grant is not in the token, and a token presented for any other
 * repository, operation or object, or with another expiry, fails the MAC. The repository's id,
 * not its name: a repository deleted and made again under the same name is another repository.
 */
export type LfsOperation = 'download' | 'upload';

export interface LfsActionGrant {
  readonly operation: LfsOperation;
  readonly repositoryId: number;
  readonly oid: string;
}

/** What a token looks like; anything else is refused before any MAC is computed. */
const TOKEN_SHAPE = /^([1-9]\d{0,14})\.([A-Za-z0-9_-]{43})$/;

/** The MAC in base64url (43 characters). */
function mac(key: Buffer, grant: LfsActionGrant, expiresAtMs: number): string {
  // Every field is a fixed vocabulary, a number or hex: the newline cannot occur inside one.
  const message = ['lfs-action-v1', grant.operation, grant.repositoryId, grant.oid, expiresAtMs].join('\n');
  return createHmac('sha256', key).update(message).digest('base64url');
}

/** A token for `grant`, valid until `expiresAtMs`. */
export function lfsActionToken(key: Buffer, grant: LfsActionGrant, expiresAtMs: number): string {
  return `${expiresAtMs}.${mac(key, grant, expiresAtMs)}`;
}

/**
 * Whether `token` was made with `key` for exactly `grant` and has not expired at `nowMs`. The MAC
 * is compared in constant time, as text: base64url's last character carries 2 unused bits, so
 * comparing decoded bytes would let 4 spellings of one MAC through. The expiry, which the MAC
 * covers, is no secret.
 */
export function lfsActionTokenValid(
  key: Buffer,
  token: string,
  grant: LfsActionGrant,
  nowMs: number,
): boolean {
  const match = TOKEN_SHAPE.exec(token);
  if (!match) return false;
  const [, expiry = '', presented = ''] = match;
  const expiresAtMs = Number(expiry);
  const expected = Buffer.from(mac(key, grant, expiresAtMs));
  const macMatches = timingSafeEqual(Buffer.from(presented), expected);
  return macMatches && nowMs < expiresAtMs;
}
