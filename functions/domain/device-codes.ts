/**
 * The device authorization grant's pure rules (RFC 8628, as GitHub implements it): what device and
 * user codes look like, how long they live, the polling interval and its `slow_down` growth, and
 * the per-user limit on wrong user-code entries. `services/device-flow.ts` applies them.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';

/** The `grant_type` of a device-code poll (RFC 8628 §3.4). */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** Each `slow_down` adds this to the polling interval (RFC 8628 §3.5; the interval itself is configuration). */
export const SLOW_DOWN_STEP_SECONDS = 5;

/**
 * When each device code was last polled, as one process saw it: the memory `slow_down` is judged
 * by, so that a poll stays one read (an on-time poll would otherwise have to write its time).
 * Bounded: past `capacity` codes the least recently polled is forgotten (its next poll counts as
 * on time). A poll is judged and recorded in one synchronous step, so concurrent polls in one
 * process cannot both pass.
 */
export class PollMemory {
  readonly #lastPollAt = new Map<string, number>();

  constructor(private readonly capacity: number) {}

  /** Records a poll of `code` at `nowMs`; true when the one before came less than `intervalMs` earlier. */
  tooSoon(code: string, nowMs: number, intervalMs: number): boolean {
    const previous = this.#lastPollAt.get(code);
    // Delete, then set: the Map's order is the order of last polls, oldest first.
    this.#lastPollAt.delete(code);
    this.#lastPollAt.set(code, nowMs);
    if (this.#lastPollAt.size > this.capacity) {
      const oldest = this.#lastPollAt.keys().next();
      if (!oldest.done) this.#lastPollAt.delete(oldest.value);
    }
    return previous !== undefined && nowMs - previous < intervalMs;
  }
}

/**
 * The user code's alphabet: GitHub's twenty consonants. No vowels (no words), and none of the
 * look-alikes 0/O, 1/I/L, 5/S-with-digits: every character is an upper-case consonant, so a user
 * typing in lower case or with the hyphen left out still matches.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
/** Eight characters (20^8 ≈ 2.6·10^10 codes), shown as `XXXX-XXXX`. */
export const USER_CODE_LENGTH = 8;

export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i += 1)
    code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * A user code as typed, in its canonical `XXXX-XXXX` form: case, spaces and hyphens do not
 * matter. Undefined when it cannot be a user code (nothing is looked up then).
 */
export function canonicalUserCode(typed: string): string | undefined {
  const letters = typed.toUpperCase().replace(/[\s-]/g, '');
  if (letters.length !== USER_CODE_LENGTH) return undefined;
  for (const char of letters) if (!USER_CODE_ALPHABET.includes(char)) return undefined;
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}

/** 160 random bits like authorization codes; only the SHA-256 is stored. */
export const newDeviceCode = (): string => randomBytes(20).toString('hex');
export const DEVICE_CODE_FORMAT = /^[0-9a-f]{40}$/;

/** SHA-256 of a device code or of a canonical user code: the only form either is stored in. */
export const hashDeviceSecret = (value: string): string => createHash('sha256').update(value).digest('hex');

/**
 * Wrong user-code entries a user may make per window before code entry is locked for the rest of
 * it. A user code has 2.6·10^10 values and lives 15 minutes, so five guesses a window make finding
 * someone else's pending code hopeless.
 */
export const MAX_WRONG_ENTRIES = 5;
export const ENTRY_WINDOW_SECONDS = 900;
export const entryWindow = (epochMs: number): number => Math.floor(epochMs / 1000 / ENTRY_WINDOW_SECONDS);
/** The window's counter is deleted by TTL once the window is over. */
export const entryWindowExpiry = (window: number): number => (window + 2) * ENTRY_WINDOW_SECONDS;
/** When the window ends (epoch seconds): the locked user may try again then. */
export const entryWindowEnd = (window: number): number => (window + 1) * ENTRY_WINDOW_SECONDS;
