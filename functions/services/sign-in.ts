/**
 * Password sign-in, shared by HTTP Basic on the API and the web login form: the failed-login
 * limit, scrypt verification and TOTP two-factor with replay protection, decided in one place.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  consumeOtpStep,
  getLoginRecord,
  getOtpSecret,
  type LoginRecord,
  removeOtpSecret,
  reserveLoginAttempt,
  setOtpSecret,
  settleLoginAttempt,
  upgradePasswordHash,
} from '#data/users';
import { foldAsciiCase } from '#domain/ascii-case';
import {
  attemptsAllowedInWindow,
  type FailureCounter,
  failureCounterOf,
  failureWindow,
  failureWindowExpiry,
  isLockedOut,
} from '#domain/login-limits';
import { hashPassword, MAX_PASSWORD_LENGTH, needsRehash, verifyPassword } from '#domain/passwords';
import { isSealed, type SealContext, SealedSecretError } from '#domain/sealed-secrets';
import { hashSecretValue } from '#domain/sessions';
import { base32Decode, base32Encode, matchingStep } from '#domain/totp';
import { isValidLogin, type User } from '#domain/users';
import { secretSealer } from '#services/secret-sealer';
import {
  announceSecurityEvents,
  recordFailedSignIn,
  recordSecurityEvent,
  securityEvent,
  securityEventItems,
} from '#services/security-log';
import { countSignal } from '#shared/log';
import { SEAL_PURPOSE } from '#shared/seal-purposes';

export type SignInResult =
  | { readonly kind: 'ok'; readonly user: User }
  | { readonly kind: 'bad-credentials' }
  | { readonly kind: 'locked-out' }
  /** The password was right; the user has two-factor on and sent no code. Not a failure. */
  | { readonly kind: 'otp-required'; readonly user: User }
  | { readonly kind: 'otp-invalid' };

/** An attempt reserved against the limit: kept when it fails, released when it does not. */
interface Attempt {
  readonly login: string;
  readonly window: number;
  readonly counter: FailureCounter;
}

/** How long an attempt waits for a window full of attempts still being checked (not failures). */
const RESERVE_PATIENCE_MS = 8000;

/**
 * Reserves one attempt before any secret is checked (see `login-limits.ts`); undefined when the
 * login is locked out. The failures are read first, so a lock-out costs no write. A window can
 * also be full of attempts still in flight (a client sending many requests at once with the right
 * password): those settle within a password check, so this one waits for them instead of being
 * refused, and is refused only once the window holds failures alone.
 */
async function reserve(
  login: string,
  window: number,
  record: LoginRecord,
  counter: FailureCounter = 'password',
): Promise<Attempt | undefined> {
  const deadline = Date.now() + RESERVE_PATIENCE_MS;
  let current = record;
  for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
    if (isLockedOut(current.failures)) return undefined;
    const allowed = attemptsAllowedInWindow(current.previousFailures);
    if (await reserveLoginAttempt(login, window, allowed, failureWindowExpiry(window), counter))
      return { login, window, counter };
    if (Date.now() > deadline) return undefined;
    await sleep(pause / 2 + Math.random() * (pause / 2));
    current = await getLoginRecord(login, window, counter);
  }
}

/**
 * A wrong password or code: the reserved attempt stays counted as a failure, and one against an
 * existing account goes in its security log (`what`: the password or the one-time code was wrong).
 * A refusal while locked out reserves no attempt and is not logged: the limit bounds the log.
 */
async function failed(
  attempt: Attempt,
  result: SignInResult,
  account: { readonly login: string; readonly what: 'password' | 'two-factor' } | undefined,
): Promise<SignInResult> {
  countSignal('LoginFailed');
  await settleLoginAttempt(attempt.login, attempt.window, true, attempt.counter);
  if (account)
    await recordFailedSignIn(
      account.login,
      attempt.counter === 'client-secret' ? 'client-secret' : account.what,
    );
  return result;
}

/** Not a failure after all: the reservation is given back, then the result is returned. */
async function released(attempt: Attempt, result: SignInResult): Promise<SignInResult> {
  await settleLoginAttempt(attempt.login, attempt.window, false, attempt.counter);
  return result;
}

/**
 * Checks a password (and, for two-factor users, a one-time code). Refused outright while the
 * login is locked out; a wrong password or a wrong or expired code counts towards the lock-out,
 * in the counter of its kind (`failureCounterOf`: a client secret sent as a password counts apart).
 * Unknown logins cost the same scrypt as known ones.
 */
export async function signIn(
  login: string,
  password: string,
  otp: string | undefined,
  now = Date.now(),
): Promise<SignInResult> {
  // Not a login at all (non-ASCII look-alikes, over-long names): no account can match.
  // Implausible credentials cost no read (an over-long login would exceed DynamoDB's key size).
  if (!isValidLogin(login) || password.length > MAX_PASSWORD_LENGTH) return { kind: 'bad-credentials' };
  const window = failureWindow(now);
  const counter = failureCounterOf(password);
  const record = await getLoginRecord(login, window, counter);
  const attempt = await reserve(login, window, record, counter);
  if (!attempt) return { kind: 'locked-out' };
  const valid = await verifyPassword(password, record.account?.credential.passwordHash);
  if (!record.account || !valid)
    return failed(
      attempt,
      { kind: 'bad-credentials' },
      record.account ? { login: record.account.user.login, what: 'password' } : undefined,
    );
  const { user, credential } = record.account;
  // The password is known right now: the one moment a hash of older parameters can be replaced.
  if (needsRehash(credential.passwordHash))
    await upgradePasswordHash(user.login, credential.passwordHash, await hashPassword(password));
  if (!credential.otpSecret) return released(attempt, { kind: 'ok', user });
  if (!otp) return released(attempt, { kind: 'otp-required', user });
  return spendCode(attempt, user, credential.otpSecret, otp, now);
}

/** The second step of a web sign-in whose password was already verified: the code alone. */
export async function completeTwoFactor(login: string, otp: string, now = Date.now()): Promise<SignInResult> {
  const window = failureWindow(now);
  const record = await getLoginRecord(login, window);
  const attempt = await reserve(login, window, record);
  if (!attempt) return { kind: 'locked-out' };
  if (!record.account?.credential.otpSecret) return released(attempt, { kind: 'bad-credentials' });
  return spendCode(attempt, record.account.user, record.account.credential.otpSecret, otp, now);
}

/** TOTP seeds are sealed at rest, bound to their login. */
const otpContext = (login: string): SealContext => ({
  purpose: SEAL_PURPOSE.totp,
  subject: foldAsciiCase(login),
});

/** Seals a new base32 TOTP seed for storage (the admin CLI's `user otp enable`). */
export async function sealOtpSecret(login: string, secret: string): Promise<string> {
  return secretSealer().seal(base32Decode(secret), otpContext(login));
}

/** Turns on two-factor sign-in with a new seed, stored sealed; `false` when the user does not exist. */
export async function enableOtp(login: string, secret: string): Promise<boolean> {
  const sealed = await sealOtpSecret(login, secret);
  const enabled = await setOtpSecret(login, sealed);
  // Named by a hash of the sealed seed stored (never the seed): each enabling is its own event.
  if (enabled)
    await recordSecurityEvent({ kind: 'twoFactorEnabled', login, identity: [hashSecretValue(sealed)] });
  return enabled;
}

/**
 * Turns two-factor sign-in off (the admin CLI's `user otp disable`), the security log's entry in the
 * same transaction; `false` when the user has none (or no such user).
 */
export async function disableOtp(login: string): Promise<boolean> {
  // A secret replaced between the read and the write is read again; three tries bound a race.
  for (let tries = 0; tries < 3; tries++) {
    const sealed = await getOtpSecret(login);
    if (sealed === undefined) return false;
    // Named by a hash of the seed it ends, as its enabling was.
    const event = securityEvent({ kind: 'twoFactorDisabled', login, identity: [hashSecretValue(sealed)] });
    if (await removeOtpSecret(login, sealed, securityEventItems(event))) {
      await announceSecurityEvents([event]);
      return true;
    }
  }
  return false;
}

async function openSeed(login: string, stored: string): Promise<string | undefined> {
  if (!isSealed(stored)) return stored;
  try {
    return base32Encode(await secretSealer().open(stored, otpContext(login)));
  } catch (error) {
    if (error instanceof SealedSecretError) return undefined;
    throw error;
  }
}

/**
 * A wrong code counts towards the lock-out (it is a guess). A right code whose step is already
 * spent is refused but not counted: it proves knowledge of the current code, and clients such as
 * Octokit resend the last code on every request.
 */
async function spendCode(
  attempt: Attempt,
  user: User,
  secret: string,
  otp: string,
  now: number,
): Promise<SignInResult> {
  const seed = await openSeed(user.login, secret);
  // A seed that does not open (moved from another user's item, another key) matches no code.
  if (seed === undefined) return released(attempt, { kind: 'otp-invalid' });
  const step = matchingStep(seed, otp.trim(), now);
  if (step === undefined)
    return failed(attempt, { kind: 'otp-invalid' }, { login: user.login, what: 'two-factor' });
  const spent = await consumeOtpStep(user.login, step);
  // A seed stored before sealing existed is sealed once its owner has proved it with a code.
  if (spent && !isSealed(secret))
    await setOtpSecret(user.login, await sealOtpSecret(user.login, seed), secret);
  return released(attempt, spent ? { kind: 'ok', user } : { kind: 'otp-invalid' });
}
