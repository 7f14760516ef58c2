/**
 * The failed-login limit: once MAX_FAILURES bad passwords (or bad one-time codes) for a login fall
 * within the current and the previous fixed window, every Basic attempt for that login is refused
 * with 403, as GitHub does. Counting two windows means no burst fits across a window boundary and
 * the lock lasts between one and two windows; both counters are read in the same round trip as the
 * credential.
 *
 * Each attempt is reserved in the current window's counter (a conditional increment) before the
 * secret is checked, and given back when it turns out not to be a failure, so the number of
 * secrets checked is bounded by the limit, not by how many requests an attacker sends at once.
 * An attempt that finds the window full of attempts still being checked waits for them to settle;
 * only settled failures lock the login.
 */
export const MAX_FAILURES = 10;
export const WINDOW_SECONDS = 300;

export const failureWindow = (epochMs: number): number => Math.floor(epochMs / 1000 / WINDOW_SECONDS);

/** When the window's counter may be deleted by TTL (once no later window counts it). */
export const failureWindowExpiry = (window: number): number => (window + 3) * WINDOW_SECONDS;

export const isLockedOut = (failures: number): boolean => failures >= MAX_FAILURES;

/** How many attempts the current window may hold, given the failures of the previous one. */
export const attemptsAllowedInWindow = (previousFailures: number): number =>
  Math.max(0, MAX_FAILURES - previousFailures);

/**
 * Which failure counter of a login an attempt counts in. A password with the shape of an OAuth
 * client secret (40 lower-case hex characters, as this service and GitHub issue them) is an
 * application's `client_id:client_secret` sent as Basic to a user route: it counts in the login's
 * `client-secret` counter, so an application (or anyone) sending such pairs, right or rotated, never
 * locks out the user whose login equals the client id. Everything else counts in `password`. Each
 * counter locks only its own kind of attempt; the user's password is still checked in both, and a
 * guess of the client-secret kind is a guess of a 160-bit string.
 */
export type FailureCounter = 'password' | 'client-secret';

export const failureCounterOf = (password: string): FailureCounter =>
  /^[0-9a-f]{40}$/.test(password) ? 'client-secret' : 'password';
