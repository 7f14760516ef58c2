import { inStepSince } from '#domain/batch-dashboard';
import { FINDING_KINDS, type FindingKind } from '#domain/import-report';
import type { ImportSync } from '#domain/import-sync';
import type { BatchEntryView } from '#services/import-batches';
import { type Html, html } from '#shared/html';
import { scheduleWords, timeWords } from '../import-page/following-view.ts';

/*
 * The cells of one row of the batch dashboard, in words short enough for 200 rows: the import's
 * status and percent, its report's findings as counts with a short word each, its following state,
 * its last sync, and how long it has been known to match its origin.
 */

/** A kind of finding in two or three words, for a count in a table cell (the progress page has the sentences). */
export const FINDING_SHORT_WORDS: Readonly<Record<FindingKind, readonly [one: string, many: string]>> = {
  renamed_refs: ['renamed ref', 'renamed refs'],
  kept_deleted_refs: ['deleted ref', 'deleted refs'],
  closed_branches: ['closed branch', 'closed branches'],
  empty_directories: ['empty dir', 'empty dirs'],
  outside_layout_paths: ['path outside layout', 'paths outside layout'],
  svn_externals: ['svn:externals', 'svn:externals'],
  svn_properties: ['svn property', 'svn properties'],
  svn_mergeinfo: ['svn:mergeinfo', 'svn:mergeinfo'],
  authorless_commits: ['authorless commit', 'authorless commits'],
  hg_subrepos: ['subrepo', 'subrepos'],
  tfvc_labels: ['label', 'labels'],
  tfvc_shelvesets: ['shelveset', 'shelvesets'],
  tfvc_branches: ['TFVC branch', 'TFVC branches'],
  unstorable_paths: ['unstorable path', 'unstorable paths'],
  missing_lfs_objects: ['missing LFS object', 'missing LFS objects'],
};

const counted = (count: number, [one, many]: readonly [string, string]) =>
  `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;

/** Kinds shown in the cell; the rest are counted and all are in its title. */
const KINDS_SHOWN = 2;

export function findingsCell(counts: Partial<Record<FindingKind, number>> | undefined): Html {
  const found = FINDING_KINDS.flatMap((kind) => {
    const count = counts?.[kind] ?? 0;
    return count > 0 ? [counted(count, FINDING_SHORT_WORDS[kind])] : [];
  });
  if (found.length === 0) return html`<span class="muted">none</span>`;
  const rest = found.length - KINDS_SHOWN;
  return html`<span title="${found.join(', ')}">${found.slice(0, KINDS_SHOWN).join(', ')}${rest > 0 ? `, +${rest} more` : ''}</span>`;
}

/** `5 min ago`, `3 h ago`, `2 days ago`, in a `<time>` whose title is the time in words. */
export function agoElement(iso: string, now: number): Html {
  const minutes = Math.max(0, Math.floor((now - Date.parse(iso)) / 60_000));
  const words =
    minutes < 1
      ? 'just now'
      : minutes < 60
        ? `${minutes} min ago`
        : minutes < 48 * 60
          ? `${Math.floor(minutes / 60)} h ago`
          : `${Math.floor(minutes / 1440)} days ago`;
  return html`<time datetime="${iso}" title="${timeWords(iso)}">${words}</time>`;
}

const STATUS_WORDS: Readonly<Record<string, string>> = {
  detecting: 'Detecting',
  importing: 'Importing',
  mapping: 'Rewriting',
  pushing: 'Pushing',
  complete: 'Complete',
  auth_failed: 'Needs credentials',
  error: 'Failed',
  detection_needs_auth: 'Needs credentials',
  detection_found_nothing: 'Nothing found',
  detection_found_multiple: 'Choose a project',
};

/** The entry's status in a word or two (and why, when it did not start or waits for someone). */
export function statusCell({ entry, record }: BatchEntryView): Html {
  if (entry.state === 'queued') return html`Queued`;
  if (entry.state === 'cancelled') return html`Cancelled`;
  if (entry.state === 'not_started' || !record)
    return html`Not started${entry.message ? html`: <span class="muted">${entry.message}</span>` : ''}`;
  const waiting =
    record.waitingFor === 'lfs_choice'
      ? 'Choose how to store large files'
      : record.waitingFor === 'project_choice'
        ? 'Choose a project'
        : record.waitingFor === 'credentials'
          ? 'Needs credentials'
          : undefined;
  const word = waiting ?? STATUS_WORDS[record.status] ?? record.status;
  const failed =
    record.status === 'error' && record.failedStep
      ? html` <span class="muted">(${record.failedStep})</span>`
      : '';
  return html`${word}${failed}`;
}

/** How far the import got, in percent: the raw step's, the push's while pushing, 100 once complete. */
export function percentOf({ entry, record }: BatchEntryView): number | null {
  if (entry.state !== 'started' || !record) return null;
  if (record.status === 'complete') return 100;
  const value = record.status === 'pushing' ? record.pushPercent : record.percent;
  return value === null ? null : Math.max(0, Math.min(100, Math.round(value)));
}

export function followingCell(sync: ImportSync | undefined, now: number): Html {
  if (!sync || sync.state === 'off') return html`<span class="muted">Off</span>`;
  if (sync.state === 'cut_over')
    return html`Cut over${sync.cutOverAt ? html` ${agoElement(sync.cutOverAt, now)}` : ''}`;
  return html`Following <span class="muted">(${scheduleWords(sync.intervalMinutes).split(':')[0]?.toLowerCase()})</span>`;
}

export function lastSyncCell(sync: ImportSync | undefined, now: number): Html {
  const last = sync?.lastSync;
  if (!sync || sync.state === 'off' || !last)
    return html`<span class="muted">${sync?.state === 'following' ? 'Never' : '—'}</span>`;
  const when =
    sync.lastSyncedAt && last.status === 'succeeded' ? agoElement(sync.lastSyncedAt, now) : undefined;
  if (last.status !== 'succeeded') {
    const reason =
      last.errorMessage ??
      (last.status === 'auth_failed' ? 'the origin refused the credentials' : 'no reason recorded');
    const short = reason.length > 80 ? `${reason.slice(0, 79)}…` : reason;
    return html`<strong>Failed:</strong> <span title="${reason}">${short}</span>`;
  }
  const commits =
    last.newCommits === 0 ? 'nothing new' : counted(last.newCommits, ['new commit', 'new commits']);
  return html`${when ?? ''}${when ? ', ' : ''}${commits}`;
}

/** How long the repository has been known to match its origin (decision 0151): honest, and read from the sync alone. */
export function inStepCell(sync: ImportSync | undefined, now: number): Html {
  if (sync?.state !== 'following') return html`<span class="muted">—</span>`;
  if (sync.lastSync && sync.lastSync.status !== 'succeeded') return html`Behind: the last sync failed`;
  const since = inStepSince(sync);
  return since === null
    ? html`<span class="muted">Not checked yet</span>`
    : html`Matched ${agoElement(since, now)}`;
}
