import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Password hashing with scrypt (memory-hard, in Node's standard library). The stored form names
 * its parameters, so they can be raised later without breaking existing hashes:
 * `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>`. A hash with other parameters is replaced on the next
 * successful sign-in (`needsRehash`).
 *
 * N=2^14, r=8, p=5: one of OWASP's scrypt configurations (16 MiB of memory per hash, p lanes run
 * one after another), so a 512 MB Lambda serving one request at a time has ample room; the
 * 128 MiB configuration (N=2^17, p=1) costs about the same CPU for eight times the memory.
 */
const N = 2 ** 14;
const R = 8;
const P = 5;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFKC'),
      salt,
      KEY_LENGTH,
      { N: n, r, p, maxmem: 128 * n * r * 2 },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return ['scrypt', N, R, P, salt.toString('base64'), key.toString('base64')].join('$');
}

/** A hash of a random password, verified against when the login does not exist (same timing). */
let dummyHash: Promise<string> | undefined;
const dummy = (): Promise<string> => (dummyHash ??= hashPassword(randomBytes(16).toString('hex')));

/** Constant-time check; `stored` undefined means "no such user" and still costs one scrypt. */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = (stored ?? (await dummy())).split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), Number(n), Number(r), Number(p));
  return timingSafeEqual(actual, expected) && stored !== undefined;
}

/** Whether a stored hash was made with other parameters than today's (upgrade it after a sign-in). */
export function needsRehash(stored: string): boolean {
  const [scheme, n, r, p] = stored.split('$');
  return scheme !== 'scrypt' || Number(n) !== N || Number(r) !== R || Number(p) !== P;
}

/** GitHub's rule: at least 15 characters, or at least 8 with a digit and a lower-case letter. */
/** Longer passwords are refused at sign-up and never checked at sign-in (no scrypt, no read). */
export const MAX_PASSWORD_LENGTH = 1024;

export function isAcceptablePassword(password: string): boolean {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  return password.length >= 15 || (password.length >= 8 && /\d/.test(password) && /[a-z]/.test(password));
}
