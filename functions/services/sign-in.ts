/**
 * Password sign-in, shared by HTTP Basic on the API and the web login form: the failed-login
 * limit, scrypt verification and TOTP two-factor with replay protection, decided in one place.
 */
import { consumeOtpStep, getLoginRecord, recordFailedLogin } from '#data/users';
import { failureWindow, failureWindowExpiry, isLockedOut } from '#domain/login-limits';
import { verifyPassword } from '#domain/passwords';
import { matchingStep } from '#domain/totp';
import type { User } from '#domain/users';
import { countSignal } from '#shared/log';

export type SignInResult =
  | { readonly kind: 'ok'; readonly user: User }
  | { readonly kind: 'bad-credentials' }
  | { readonly kind: 'locked-out' }
  /** The password was right; the user has two-factor on and sent no code. Not a failure. */
  | { readonly kind: 'otp-required'; readonly user: User }
  | { readonly kind: 'otp-invalid' };

/**
 * Checks a password (and, for two-factor users, a one-time code). Refused outright while the
 * login is locked out; a wrong password or a wrong, expired or replayed code counts towards the
 * lock-out. Unknown logins cost the same scrypt as known ones.
 */
export async function signIn(
  login: string,
  password: string,
  otp: string | undefined,
  now = Date.now(),
): Promise<SignInResult> {
  const window = failureWindow(now);
  const record = await getLoginRecord(login, window);
  if (isLockedOut(record.failures)) return { kind: 'locked-out' };
  const valid = await verifyPassword(password, record.account?.credential.passwordHash);
  if (!record.account || !valid) {
    await recordFailedLogin(login, window, failureWindowExpiry(window));
    countSignal('LoginFailed');
    return { kind: 'bad-credentials' };
  }
  const { user, credential } = record.account;
  if (!credential.otpSecret) return { kind: 'ok', user };
  if (!otp) return { kind: 'otp-required', user };
  return spendCode(user, credential.otpSecret, otp, window, now);
}

/** The second step of a web sign-in whose password was already verified: the code alone. */
export async function completeTwoFactor(login: string, otp: string, now = Date.now()): Promise<SignInResult> {
  const window = failureWindow(now);
  const record = await getLoginRecord(login, window);
  if (isLockedOut(record.failures)) return { kind: 'locked-out' };
  if (!record.account?.credential.otpSecret) return { kind: 'bad-credentials' };
  return spendCode(record.account.user, record.account.credential.otpSecret, otp, window, now);
}

/**
 * A wrong code counts towards the lock-out (it is a guess). A right code whose step is already
 * spent is refused but not counted: it proves knowledge of the current code, and clients such as
 * Octokit resend the last code on every request.
 */
async function spendCode(
  user: User,
  secret: string,
  otp: string,
  window: number,
  now: number,
): Promise<SignInResult> {
  const step = matchingStep(secret, otp.trim(), now);
  if (step === undefined) {
    await recordFailedLogin(user.login, window, failureWindowExpiry(window));
    countSignal('LoginFailed');
    return { kind: 'otp-invalid' };
  }
  return (await consumeOtpStep(user.login, step)) ? { kind: 'ok', user } : { kind: 'otp-invalid' };
}
