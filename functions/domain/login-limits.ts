/**
 * The failed-login limit: once MAX_FAILURES bad passwords (or bad one-time codes) for a login fall
 * within the current and the previous fixed window, every Basic attempt for that login is refused
 * with 403, as GitHub does. Counting two windows means no burst fits across a window boundary and
 * the lock lasts between one and two windows; both counters are read in the same round trip as the
 * credential.
 */
export const MAX_FAILURES = 10;
export const WINDOW_SECONDS = 300;

export const failureWindow = (epochMs: number): number => Math.floor(epochMs / 1000 / WINDOW_SECONDS);

/** When the window's counter may be deleted by TTL (once no later window counts it). */
export const failureWindowExpiry = (window: number): number => (window + 3) * WINDOW_SECONDS;

export const isLockedOut = (failures: number): boolean => failures >= MAX_FAILURES;
