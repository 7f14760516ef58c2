import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A browser session. Only the SHA-256 of its cookie value is stored. */
export interface Session {
  readonly idHash: string;
  readonly login: string;
  /** Synchronizer token embedded in the session's forms. */
  readonly csrf: string;
  /** Password verified, one-time code still owed (two-factor sign-in in progress). */
  readonly pendingOtp: boolean;
  readonly expiresAt: number;
}

export const SESSION_SECONDS = 14 * 24 * 3600;
export const PENDING_OTP_SECONDS = 10 * 60;

/** 256 random bits, URL-safe: cookie values, CSRF tokens. */
export const newSecret = (): string => randomBytes(32).toString('base64url');

export const hashSecretValue = (value: string): string => createHash('sha256').update(value).digest('hex');

export function sameSecret(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
