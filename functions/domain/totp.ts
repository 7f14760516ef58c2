import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** RFC 6238 TOTP with the parameters authenticator apps assume: SHA-1, 6 digits, 30 s steps. */
const STEP_SECONDS = 30;
const DIGITS = 6;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Buffer {
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of text.replace(/=+$/, '').toUpperCase()) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error('invalid base32');
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new 160-bit secret, base32 as authenticator apps expect. */
export const newTotpSecret = (): string => base32Encode(randomBytes(20));

export function otpauthUri(issuer: string, login: string, secret: string): string {
  const label = encodeURIComponent(`${issuer}:${login}`);
  const query = new URLSearchParams({
    secret,
    issuer,
    algorithm: 'SHA1',
    digits: String(DIGITS),
    period: String(STEP_SECONDS),
  });
  return `otpauth://totp/${label}?${query}`;
}

export const timeStep = (epochMs: number): number => Math.floor(epochMs / 1000 / STEP_SECONDS);

/** The code for a time step (RFC 4226 dynamic truncation). */
export function totpCode(secret: string, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const digest = createHmac('sha1', base32Decode(secret)).update(counter).digest();
  const offset = (digest[digest.length - 1] ?? 0) & 0x0f;
  const binary = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** DIGITS).padStart(DIGITS, '0');
}

/**
 * The time step a code belongs to, allowing one step of clock skew either way; undefined when it
 * matches none. Callers store the step to refuse replays.
 */
export function matchingStep(secret: string, code: string, epochMs: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const current = timeStep(epochMs);
  let found: number | undefined;
  for (const step of [current - 1, current, current + 1]) {
    // Compare every candidate so timing does not tell which step matched.
    if (timingSafeEqual(Buffer.from(totpCode(secret, step)), Buffer.from(code)) && found === undefined)
      found = step;
  }
  return found;
}
