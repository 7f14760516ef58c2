/**
 * Following an origin after an import (issue 27, an extension of the import API): the sync
 * resource's states and rules. `off` until the owner asks to follow (once the import is
 * `complete`), `following` until the cut-over, `cut_over` for good: the origin is then no longer
 * the source of truth and the repository is the owner's.
 */

export type SyncState = 'off' | 'following' | 'cut_over';

/**
 * A branch or tag a sync's publish deleted or moved against history (the origin deleted it, or
 * rewrote it: a Git force-push). `oldTip` is the id the hosted ref pointed at (a tag object for an
 * annotated tag), `newTip` where it points now (null: deleted), `backupRef` the ref that keeps the
 * old tip (`backupRefName`), null when nothing was kept.
 */
export interface SyncRefChange {
  readonly ref: string;
  readonly oldTip: string;
  readonly newTip: string | null;
  readonly backupRef: string | null;
}

/** What a sync's publish did to refs besides adding and fast-forwarding them. */
export interface SyncRefChanges {
  readonly deleted: readonly SyncRefChange[];
  readonly rewritten: readonly SyncRefChange[];
}

/** A sync item and a workflow payload stay small: at most this many changes of each kind are named. */
export const MAX_REPORTED_REF_CHANGES = 100;

/**
 * Where a sync keeps an old tip: `refs/backups/heads/<branch>@<old id>` or
 * `refs/backups/tags/<tag>@<old id>`. Outside `refs/heads` and `refs/tags`, so no origin branch or
 * tag can collide with one (not even a directory/file clash such as a branch named `backups`) and
 * publishing never mistakes one for a ref the origin deleted; the full old id makes it unique per
 * old tip (the same tip kept twice is the same ref). Always a valid refname: the ref was one, and
 * `@` followed by hex never forms `@{`.
 */
export const backupRefName = (ref: string, oldTip: string): string =>
  `refs/backups/${ref.slice('refs/'.length)}@${oldTip}`;

/** The outcome of the last sync attempt (none before the first sync). */
export interface LastSync {
  /** `auth_failed`: the origin refused the credentials; the import waits for new ones (still following). */
  readonly status: 'succeeded' | 'failed' | 'auth_failed';
  readonly newCommits: number;
  readonly errorMessage?: string | undefined;
  /** Branches and tags the sync deleted, and those it moved to a history without their old tip. */
  readonly refChanges?: SyncRefChanges | undefined;
}

export interface ImportSync {
  readonly state: SyncState;
  /** Minutes between scheduled syncs; null: on demand only. */
  readonly intervalMinutes: number | null;
  /** When following began (the schedule counts from it until the first sync). */
  readonly followingSince: string | null;
  readonly lastSyncedAt: string | null;
  /** When the scheduler last looked at the origin (a sync started, or nothing new found). */
  readonly lastCheckedAt: string | null;
  /** The newest origin revision published (null until a sync records it). */
  readonly originRevision: string | null;
  readonly lastSync: LastSync | null;
  readonly cutOverAt: string | null;
  /** A branch or tag the origin deletes is kept as a backup ref (`backupRefName`) instead of deleted. */
  readonly keepDeletedRefs?: boolean;
}

/** Shorter intervals would keep an origin busy for little gain. */
export const MIN_SYNC_INTERVAL_MINUTES = 5;
/** One year: longer is better served by syncing on demand. */
export const MAX_SYNC_INTERVAL_MINUTES = 525_600;

/** An interval the owner may choose: whole minutes within the bounds above. */
export const isSyncInterval = (minutes: number): boolean =>
  Number.isInteger(minutes) && minutes >= MIN_SYNC_INTERVAL_MINUTES && minutes <= MAX_SYNC_INTERVAL_MINUTES;

/** The resource of an import nobody asked to follow. */
export const SYNC_OFF: ImportSync = {
  state: 'off',
  intervalMinutes: null,
  followingSince: null,
  lastSyncedAt: null,
  lastCheckedAt: null,
  originRevision: null,
  lastSync: null,
  cutOverAt: null,
};

/** What the schedule is computed from (the scheduler reads only these). */
export type SyncSchedule = Pick<
  ImportSync,
  'state' | 'intervalMinutes' | 'followingSince' | 'lastSyncedAt' | 'lastCheckedAt'
>;

/**
 * When the next scheduled sync is due: the interval after the last sync or the last check of the
 * origin, whichever is later (or after the start of following). A check that found nothing new,
 * or that started a sync which failed, moves the schedule on, so a failing origin is tried once an
 * interval, not at every tick.
 */
export function nextSyncAt(sync: SyncSchedule): string | null {
  if (sync.state !== 'following' || sync.intervalMinutes === null) return null;
  const times = [sync.lastSyncedAt, sync.lastCheckedAt].filter((time): time is string => time !== null);
  const from =
    times.length > 0 ? times.reduce((a, b) => (Date.parse(a) >= Date.parse(b) ? a : b)) : sync.followingSince;
  if (from === null) return null;
  return new Date(Date.parse(from) + sync.intervalMinutes * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** What `last_sync` says while a sync waits for new credentials (`PATCH …/import`). */
export const SYNC_AUTH_FAILED_MESSAGE =
  'The origin refused the credentials; following goes on once new ones are sent (PATCH …/import with vcs_username and vcs_password)';

/**
 * What a push to a following repository is told (git prints it as `remote: …`): the origin is the
 * source of truth until the cut-over, and how to cut over.
 */
export const followingRefusal = (owner: string, repo: string): string =>
  `This repository follows its import origin until cut-over, so it is read-only. ` +
  `To push, cut over first: DELETE /repos/${owner}/${repo}/import/sync.`;
