import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * PKCE (RFC 7636) for the authorization code flow. Only `S256` is accepted: `plain` protects
 * nothing once the authorize request leaks. RFC 7636 §4.3 makes a missing method mean `plain`, so
 * a challenge without `code_challenge_method=S256` is refused too, with a message that says what
 * to send (refusing is safer than silently reading it as S256).
 */

export type PkceCheck =
  | { readonly ok: true; readonly challenge: string | null }
  | { readonly ok: false; readonly message: string };

/** base64url of a SHA-256: 32 bytes, 43 characters, no padding. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/**
 * RFC 7636 §4.1: 43–128 characters of the unreserved set; also accepted, the standard base64
 * alphabet with its padding (`+`, `/`, and up to two `=` at the end): git-credential-oauth 0.4.2
 * (Debian's) sends the padded standard base64 of 32 random bytes, 44 characters. That is as much
 * entropy as RFC 7636 asks for, it arrives form-encoded like any other value, and refusing it
 * would break an unmodified client that GitHub serves (see docs/decisions.md, issue 26).
 */
const VERIFIER = /^(?=.{43,128}$)[A-Za-z0-9\-._~+/]+={0,2}$/;

/** Checks the authorize request's PKCE parameters; `challenge: null` when PKCE is not used. */
export function checkChallenge(
  challenge: string | null | undefined,
  method: string | null | undefined,
): PkceCheck {
  const hasChallenge = challenge !== undefined && challenge !== null && challenge !== '';
  const hasMethod = method !== undefined && method !== null && method !== '';
  if (!hasChallenge) {
    return hasMethod
      ? { ok: false, message: 'code_challenge_method was sent without a code_challenge.' }
      : { ok: true, challenge: null };
  }
  if (method !== 'S256') {
    return {
      ok: false,
      message:
        'Only the S256 code challenge method is supported: send code_challenge_method=S256 with a code_challenge that is the base64url SHA-256 of your code_verifier.',
    };
  }
  if (!S256_CHALLENGE.test(challenge))
    return { ok: false, message: 'code_challenge must be 43 base64url characters (an S256 challenge).' };
  return { ok: true, challenge };
}

export const challengeOf = (verifier: string): string =>
  createHash('sha256').update(verifier).digest('base64url');

/**
 * Whether the token request's `code_verifier` fits the code. A code issued with a challenge needs
 * the matching verifier; a code issued without one refuses any verifier (RFC 9700 §4.8.2: that
 * mismatch is how a PKCE downgrade shows).
 */
export function verifierMatches(verifier: string | null | undefined, challenge: string | null): boolean {
  const sent = verifier !== undefined && verifier !== null && verifier !== '';
  if (challenge === null) return !sent;
  if (!sent || !VERIFIER.test(verifier)) return false;
  const actual = Buffer.from(challengeOf(verifier));
  const expected = Buffer.from(challenge);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
