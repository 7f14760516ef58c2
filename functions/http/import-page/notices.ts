import { type Html, html } from '#shared/html';

/*
 * What a change on the progress page says after its redirect back (`?notice=<key>`). Only these
 * keys mean anything, so the address carries no text to reflect into the page.
 */

const NOTICES = {
  following: 'The repository now follows its origin. Pushes are refused until you cut over.',
  schedule: 'The sync schedule was changed.',
  'sync-started': 'A sync has started: the status below shows its progress.',
  'cut-over': 'The repository was cut over: its origin is no longer followed, and pushes are accepted.',
} as const;

export type NoticeKey = keyof typeof NOTICES;

const isNoticeKey = (key: string | undefined): key is NoticeKey =>
  key !== undefined && Object.hasOwn(NOTICES, key);

/** The notice a redirect asked for, or nothing for an unknown or absent key. */
export function noticeBox(key: string | undefined): Html | undefined {
  if (!isNoticeKey(key)) return undefined;
  return html`<div id="import-notice" class="notice"><p>${NOTICES[key]}</p></div>`;
}
