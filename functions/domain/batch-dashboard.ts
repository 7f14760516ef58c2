/**
 * The batch dashboard's rules (issue 37, item 5), pure: which group each entry of a batch is in,
 * the counts at the top, the order rows are shown in (problems first), how long a following
 * repository has been known to match its origin, and how the batch's revision maps are cut into
 * CSV parts. Decision 0151 says why each is so.
 */
import type { BatchEntryState } from './import-batches.ts';
import type { ImportSync } from './import-sync.ts';
import type { Import } from './imports.ts';

/**
 * - `problem`: the import failed, found nothing, waits for credentials or a choice, never started,
 *   or its last sync failed: someone has to act;
 * - `running`: detecting, importing, rewriting or pushing (an import or a sync);
 * - `queued`: waiting for the batch's turn (no import yet);
 * - `complete`: done (following, cut over, or neither);
 * - `cancelled`: the batch was cancelled before it started.
 */
export type EntryGroup = 'problem' | 'running' | 'queued' | 'complete' | 'cancelled';

/** Rows in this order: what needs a person first, then what moves, then what waits, then what is done. */
export const GROUP_ORDER: readonly EntryGroup[] = ['problem', 'running', 'queued', 'complete', 'cancelled'];

/** What the dashboard knows of one entry: its queue state, and its import and sync once started. */
export interface DashboardEntry {
  readonly index: number;
  readonly repository: string;
  readonly state: BatchEntryState;
  readonly message?: string | undefined;
  readonly record?: Pick<Import, 'status' | 'percent' | 'waitingFor'> | undefined;
  readonly sync?: Pick<ImportSync, 'state' | 'lastSync'> | undefined;
}

export function entryGroup(entry: DashboardEntry): EntryGroup {
  if (entry.state === 'queued') return 'queued';
  if (entry.state === 'cancelled') return 'cancelled';
  if (entry.state === 'not_started' || !entry.record) return 'problem';
  switch (entry.record.status) {
    case 'detecting':
    case 'importing':
    case 'mapping':
    case 'pushing':
      return entry.record.waitingFor === undefined ? 'running' : 'problem';
    case 'complete': {
      const lastSync = entry.sync?.state === 'following' ? entry.sync.lastSync : null;
      return lastSync && lastSync.status !== 'succeeded' ? 'problem' : 'complete';
    }
    default:
      return 'problem';
  }
}

export type BatchCounts = Readonly<Record<EntryGroup, number>> & {
  readonly following: number;
  readonly cutOver: number;
};

export function batchCounts(entries: readonly DashboardEntry[]): BatchCounts {
  const counts = { problem: 0, running: 0, queued: 0, complete: 0, cancelled: 0, following: 0, cutOver: 0 };
  for (const entry of entries) {
    counts[entryGroup(entry)] += 1;
    if (entry.sync?.state === 'following') counts.following += 1;
    if (entry.sync?.state === 'cut_over') counts.cutOver += 1;
  }
  return counts;
}

/** Entries in `GROUP_ORDER`, each group in the batch's own order (request index). */
export function dashboardOrder<T extends DashboardEntry>(entries: readonly T[]): T[] {
  const rank = (entry: T) => GROUP_ORDER.indexOf(entryGroup(entry));
  return [...entries].sort((a, b) => rank(a) - rank(b) || a.index - b.index);
}

/**
 * The last moment a following repository is known to have matched its origin: its last successful
 * sync, or a later look of the scheduler that found nothing new. Null when neither happened yet
 * (nothing is known since the import). Knowing more (how many revisions the origin has that the
 * repository has not) would mean asking every origin on every page view.
 */
export function inStepSince(
  sync: Pick<ImportSync, 'lastSyncedAt' | 'lastCheckedAt' | 'lastSync'>,
): string | null {
  const times = [sync.lastSyncedAt, sync.lastSync?.status === 'succeeded' ? sync.lastCheckedAt : null].filter(
    (time): time is string => time !== null,
  );
  if (times.length === 0) return null;
  return times.reduce((latest, time) => (Date.parse(time) > Date.parse(latest) ? time : latest));
}

/** Lines in one part of a batch's revision-map CSV (about 0.9 MB with the repository column). */
export const BATCH_REVISIONS_PER_CSV = 10_000;

/** A run of one import's revision map: entries `start` … `start + count − 1`. */
export interface RevisionSlice {
  readonly index: number;
  readonly start: number;
  readonly count: number;
}

/**
 * The parts of the batch's CSV, in the batch's order: each part holds at most `perPart` lines,
 * whole maps packed together while they fit, a map larger than a part split across parts of its
 * own. The same totals always give the same parts, so a part's address stays meaningful while the
 * maps do not change.
 */
export function revisionParts(
  totals: readonly { readonly index: number; readonly total: number }[],
  perPart = BATCH_REVISIONS_PER_CSV,
): RevisionSlice[][] {
  const parts: RevisionSlice[][] = [];
  let current: RevisionSlice[] = [];
  let room = perPart;
  const close = () => {
    if (current.length > 0) parts.push(current);
    current = [];
    room = perPart;
  };
  for (const { index, total } of totals) {
    if (total <= 0) continue;
    // A map that does not fit starts a part of its own: split maps then start at multiples of a part.
    if (total > room) close();
    for (let start = 0; start < total; ) {
      const count = Math.min(total - start, room);
      current.push({ index, start, count });
      start += count;
      room -= count;
      if (room === 0) close();
    }
  }
  close();
  return parts;
}
