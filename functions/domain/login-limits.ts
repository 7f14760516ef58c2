/**
 * The failed-login limit: after MAX_FAILURES bad passwords (or bad one-time codes) for a login
 * within one fixed window, every Basic attempt for that login is refused with 403 until the window
 * ends, as GitHub does. Fixed windows keep the check to one item read in the same round trip as the
 * credential; the cost is that up to twice the limit can be tried across a window boundary.
 */
export const MAX_FAILURES = 10;
export const WINDOW_SECONDS = 300;

export const failureWindow = (epochMs: number): number => Math.floor(epochMs / 1000 / WINDOW_SECONDS);

/** When the window's counter may be deleted by TTL (one window after it ends). */
export const failureWindowExpiry = (window: number): number => (window + 2) * WINDOW_SECONDS;

export const isLockedOut = (failures: number): boolean => failures >= MAX_FAILURES;
