import type { FieldError } from '#shared/errors';

/*
 * Pure wording rules of the settings pages: dates, "last used", the notices shown after a
 * redirect, and validation errors in plain words.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `2024-03-03T10:00:00Z` → `3 Mar 2024` (UTC, the same on every server). */
export function formatDate(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/**
 * When a token was last used, in words. `lastUsedAt` is written at most once an hour per token
 * (the first use after an hour), so the real last use lies between it and now: "within the last
 * X" is exact whenever `now - lastUsedAt` is under X.
 */
export function lastUsedText(lastUsedAt: string | null, now: number): string {
  if (lastUsedAt === null) return 'Never used';
  const age = now - Date.parse(lastUsedAt);
  if (Number.isNaN(age)) return 'Never used';
  if (age < HOUR) return 'Within the last hour';
  if (age < DAY) return 'Within the last day';
  if (age < 7 * DAY) return 'Within the last week';
  if (age < 30 * DAY) return 'Within the last month';
  return `Last used on ${formatDate(lastUsedAt)}`;
}

/**
 * Notices a redirect can ask for with `?notice=<code>`. Fixed texts only: a link cannot make the
 * page say anything else.
 */
export const NOTICES = {
  'app-revoked':
    'Access revoked. The application’s tokens no longer work, and the SSH and deploy keys it created for you were deleted.',
  'token-deleted': 'Token deleted. It no longer works.',
  'token-revoked': 'Token revoked. It no longer works.',
  'token-expiration-saved':
    'Saved. Tokens issued from now on follow this setting; tokens already issued keep theirs.',
  'device-flow-enabled':
    'Device Flow enabled: devices can now ask users to authorize this application with a code.',
  'device-flow-disabled':
    'Device Flow disabled: devices can no longer ask for codes, and pending codes cannot be used.',
} as const;

export type NoticeCode = keyof typeof NOTICES;

export const noticeText = (code: string | undefined): string | undefined =>
  code !== undefined && Object.hasOwn(NOTICES, code) ? NOTICES[code as NoticeCode] : undefined;

const FIELD_NAMES: Readonly<Record<string, string>> = {
  note: 'Note',
  scopes: 'Scopes',
  name: 'Application name',
  url: 'Homepage URL',
  callback_url: 'Authorization callback URL',
};

/** Longest note (as the API's), application name and application URL the forms accept. */
export const NOTE_MAX = 1024;
export const APP_NAME_MAX = 255;
export const APP_URL_MAX = 2048;

const URL_HINT = `must be an absolute http:// or https:// URL of at most ${APP_URL_MAX} characters, without a user name, password or #fragment.`;
const INVALID_HINTS: Readonly<Record<string, string>> = {
  note: `is too long (at most ${NOTE_MAX} characters).`,
  name: `is too long (at most ${APP_NAME_MAX} characters).`,
  url: URL_HINT,
  callback_url: URL_HINT,
};

/** A validation error (GitHub's `errors[]` entry) as a sentence for a form. */
export function fieldErrorText(error: Pick<FieldError, 'field' | 'code' | 'message'>): string {
  const field = FIELD_NAMES[error.field] ?? error.field;
  switch (error.code) {
    case 'missing':
    case 'missing_field':
      return `${field} can’t be blank.`;
    case 'already_exists':
      return error.field === 'note'
        ? 'You already have a token with this note. Choose another note.'
        : `${field} is already taken.`;
    case 'invalid':
      return `${field} ${INVALID_HINTS[error.field] ?? 'is not valid.'}`;
    default:
      return error.message ? `${field}: ${error.message}` : `${field} is not valid.`;
  }
}
