import { describe, expect, it } from 'vitest';
import { base32Decode, base32Encode, matchingStep, otpauthUri, timeStep, totpCode } from '#domain/totp';

// RFC 6238 Appendix B: secret "12345678901234567890" (SHA-1), 8-digit codes; 6 digits are the low 6.
const RFC_SECRET = base32Encode(Buffer.from('12345678901234567890'));

describe('totp', () => {
  it('matches the RFC 6238 test vectors', () => {
    expect(totpCode(RFC_SECRET, timeStep(59_000))).toBe('287082');
    expect(totpCode(RFC_SECRET, timeStep(1_111_111_109_000))).toBe('081804');
    expect(totpCode(RFC_SECRET, timeStep(2_000_000_000_000))).toBe('279037');
  });

  it('round-trips base32', () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255, 17, 99]);
    expect(base32Decode(base32Encode(bytes))).toEqual(bytes);
  });

  it('accepts one step of clock skew and no more', () => {
    const now = 1_700_000_000_000;
    const step = timeStep(now);
    expect(matchingStep(RFC_SECRET, totpCode(RFC_SECRET, step - 1), now)).toBe(step - 1);
    expect(matchingStep(RFC_SECRET, totpCode(RFC_SECRET, step + 1), now)).toBe(step + 1);
    expect(matchingStep(RFC_SECRET, totpCode(RFC_SECRET, step - 2), now)).toBeUndefined();
    expect(matchingStep(RFC_SECRET, 'abcdef', now)).toBeUndefined();
  });

  it('builds an otpauth URI authenticator apps read', () => {
    const uri = new URL(otpauthUri('svc', 'octocat', 'ABC'));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/svc:octocat');
    expect(uri.searchParams.get('secret')).toBe('ABC');
  });
});
