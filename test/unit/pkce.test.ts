import { describe, expect, it } from 'vitest';
import { challengeOf, checkChallenge, verifierMatches } from '#domain/pkce';

// RFC 7636 Appendix B.
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE', () => {
  it('computes the RFC 7636 S256 example', () => {
    expect(challengeOf(VERIFIER)).toBe(CHALLENGE);
  });

  it('accepts S256 challenges and no PKCE at all', () => {
    expect(checkChallenge(CHALLENGE, 'S256')).toEqual({ ok: true, challenge: CHALLENGE });
    expect(checkChallenge(undefined, undefined)).toEqual({ ok: true, challenge: null });
    expect(checkChallenge('', '')).toEqual({ ok: true, challenge: null });
  });

  it('refuses plain, a missing method (RFC 7636: plain), other methods and malformed challenges', () => {
    expect(checkChallenge(CHALLENGE, 'plain')).toMatchObject({
      ok: false,
      message: expect.stringContaining('S256'),
    });
    expect(checkChallenge(CHALLENGE, undefined)).toMatchObject({ ok: false });
    expect(checkChallenge(CHALLENGE, 's256')).toMatchObject({ ok: false });
    expect(checkChallenge('short', 'S256')).toMatchObject({ ok: false });
    expect(checkChallenge(`${CHALLENGE}=`, 'S256')).toMatchObject({ ok: false });
    expect(checkChallenge(undefined, 'S256')).toMatchObject({ ok: false });
  });

  it('matches only the right verifier, and refuses a verifier for a code issued without PKCE', () => {
    expect(verifierMatches(VERIFIER, CHALLENGE)).toBe(true);
    expect(verifierMatches(`${VERIFIER.slice(0, -1)}Y`, CHALLENGE)).toBe(false);
    expect(verifierMatches(undefined, CHALLENGE)).toBe(false);
    expect(verifierMatches('', CHALLENGE)).toBe(false);
    expect(verifierMatches(CHALLENGE, CHALLENGE)).toBe(false);
    expect(verifierMatches(undefined, null)).toBe(true);
    expect(verifierMatches(VERIFIER, null)).toBe(false);
  });

  it('requires 43 to 128 unreserved characters', () => {
    const short = 'a'.repeat(42);
    const long = 'a'.repeat(129);
    for (const bad of [' ', '%', '!', '*', ':', '=a', '==='])
      for (const verifier of [`${'a'.repeat(42)}${bad}`, `${bad}${'a'.repeat(42)}`])
        expect(verifierMatches(verifier, challengeOf(verifier)), verifier).toBe(false);
    for (const verifier of [short, long])
      expect(verifierMatches(verifier, challengeOf(verifier))).toBe(false);
    for (const verifier of ['a'.repeat(43), `${'-._~'.repeat(32)}`])
      expect(verifierMatches(verifier, challengeOf(verifier))).toBe(true);
  });

  it('also takes the padded standard base64 verifier git-credential-oauth 0.4.2 sends (44 characters)', () => {
    // Recorded from Debian's git-credential-oauth 0.4.2: base64.StdEncoding of 32 random bytes.
    const sent = 'LMfDNPmp4y//wSX/cUeb7oVhIalj0Zr+pakG0D+WY5s=';
    expect(challengeOf(sent)).toBe('ukCO25_FsFX8HvcuhqpAk8CvSSmzzk3X-P_t3ZtZafg');
    expect(verifierMatches(sent, 'ukCO25_FsFX8HvcuhqpAk8CvSSmzzk3X-P_t3ZtZafg')).toBe(true);
    expect(verifierMatches(`${'a'.repeat(42)}+`, challengeOf(`${'a'.repeat(42)}+`))).toBe(true);
    expect(verifierMatches(`${'a'.repeat(126)}==`, challengeOf(`${'a'.repeat(126)}==`))).toBe(true);
    expect(verifierMatches(`${'a'.repeat(127)}==`, challengeOf(`${'a'.repeat(127)}==`))).toBe(false);
  });
});
