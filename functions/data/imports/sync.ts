/**
 * The sync item of an import (issue 27): whether the repository follows its origin. The owner's
 * requests write it; following starts only while the import is `complete` (checked in the same
 * transaction), and the cut-over happens once.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ImportSync, LastSync, SyncRefChanges, SyncState } from '#domain/import-sync';
import type { Import } from '#domain/imports';
import {
  conditionalWrite,
  db,
  getItemsInBatches,
  itemOf,
  now,
  tableName,
  transactWithRetry,
} from '../client.ts';
import { importKey, importSyncKey } from '../keys.ts';
import { TABLE } from '../table.ts';
import { importItem } from './items.ts';
import { lastRevision } from './revision-map.ts';
import { carriesIndex, type DueTime, dueIndexOf, indexUpdate } from './sync-due.ts';

const orNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function toLastSync(value: unknown): LastSync | null {
  if (!value || typeof value !== 'object') return null;
  const item = value as Record<string, unknown>;
  return {
    status: item.status === 'failed' || item.status === 'auth_failed' ? item.status : 'succeeded',
    newCommits: Number(item.newCommits ?? 0),
    errorMessage: typeof item.errorMessage === 'string' ? item.errorMessage : undefined,
    refChanges: toRefChanges(item.refChanges),
  };
}

/** Stored as the domain shape; absent before syncs reported them (or for a failure). */
function toRefChanges(value: unknown): SyncRefChanges | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const item = value as Record<string, unknown>;
  return {
    deleted: Array.isArray(item.deleted) ? item.deleted : [],
    rewritten: Array.isArray(item.rewritten) ? item.rewritten : [],
  };
}

export const toSync = (item: Record<string, unknown>): ImportSync => ({
  state: item.state as SyncState,
  intervalMinutes: typeof item.intervalMinutes === 'number' ? item.intervalMinutes : null,
  followingSince: orNull(item.followingSince),
  lastSyncedAt: orNull(item.lastSyncedAt),
  lastCheckedAt: orNull(item.lastCheckedAt),
  originRevision: orNull(item.originRevision),
  lastSync: toLastSync(item.lastSync),
  cutOverAt: orNull(item.cutOverAt),
  keepDeletedRefs: item.keepDeletedRefs === true,
});

/** The import's sync item (strongly consistent), or undefined: not following yet (`off`). */
export async function getImportSync(
  owner: string,
  repo: string,
  importId: number,
): Promise<ImportSync | undefined> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: importSyncKey(owner, repo, importId),
      ConsistentRead: true,
    }),
  );
  return Item ? toSync(Item) : undefined;
}

export type FollowOutcome = 'ok' | 'not-complete' | 'cut-over';

/**
 * Follows the origin with this interval (or changes the interval while following), in one
 * transaction with a check that import `importId` is still the repository's and `complete`.
 * `'cut-over'`: the import was cut over and cannot follow again.
 */
export async function followOrigin(
  owner: string,
  repo: string,
  importId: number,
  intervalMinutes: number | null,
  commitCount: number | null,
  originRevision: string | undefined,
): Promise<FollowOutcome> {
  const timestamp = now();
  const outcome = await transactWithRetry(
    [
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: importKey(owner, repo),
          ConditionExpression: 'importId = :id AND #status = :complete',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':id': importId, ':complete': 'complete' },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: importSyncKey(owner, repo, importId),
          UpdateExpression:
            'SET #type = :type, #state = :following, intervalMinutes = :interval, updatedAt = :now, ' +
            'createdAt = if_not_exists(createdAt, :now), followingSince = if_not_exists(followingSince, :now), ' +
            'commitCount = if_not_exists(commitCount, :count), originRevision = if_not_exists(originRevision, :revision)',
          ConditionExpression: 'attribute_not_exists(#state) OR #state = :following',
          ExpressionAttributeNames: { '#type': TABLE.typeAttribute, '#state': 'state' },
          ExpressionAttributeValues: {
            ':type': 'ImportSync',
            ':following': 'following',
            ':interval': intervalMinutes,
            ':now': timestamp,
            // The import's commit count: new commits of the next sync are counted from it.
            ':count': commitCount,
            // The newest origin revision the import published (the revision map's last entry).
            ':revision': originRevision ?? null,
          },
        },
      },
    ],
    'followOrigin',
  );
  if (outcome === 'ok') return 'ok';
  return outcome.failed.includes(0) ? 'not-complete' : 'cut-over';
}

/** Changes the interval of an import that follows its origin; false when it no longer does. */
export async function changeInterval(
  owner: string,
  repo: string,
  importId: number,
  intervalMinutes: number | null,
): Promise<boolean> {
  const done = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: importSyncKey(owner, repo, importId),
        UpdateExpression: 'SET intervalMinutes = :interval, updatedAt = :now',
        ConditionExpression: '#state = :following',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':interval': intervalMinutes, ':following': 'following', ':now': now() },
      }),
    ),
  );
  return done !== false;
}

/**
 * Whether branches and tags the origin deletes are kept as backup refs (`keep_deleted_refs`);
 * false when the import no longer follows its origin.
 */
export async function setKeepDeletedRefs(
  owner: string,
  repo: string,
  importId: number,
  keep: boolean,
): Promise<boolean> {
  const done = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: importSyncKey(owner, repo, importId),
        UpdateExpression: 'SET keepDeletedRefs = :keep, updatedAt = :now',
        ConditionExpression: '#state = :following',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':keep': keep, ':following': 'following', ':now': now() },
      }),
    ),
  );
  return done !== false;
}

/** What a cut-over found: done, an attempt under way, or not following. */
export type CutOverOutcome = 'ok' | 'busy' | 'not-following';

/**
 * Ends following for good (`cut_over`), in one transaction with the import item: only while
 * attempt `attempt` of import `importId` is the repository's and settled (`complete` or `error`),
 * and marking it `followEnded`, which every sync attempt's start requires absent
 * (`beginAttempt`). So a cut-over and the start of a sync exclude each other: after the cut-over
 * no attempt runs or can start, and nothing the service does writes to the repository again.
 */
export async function cutOver(
  owner: string,
  repo: string,
  importId: number,
  attempt: number,
): Promise<CutOverOutcome> {
  const timestamp = now();
  const outcome = await transactWithRetry(
    [
      {
        Update: {
          TableName: tableName(),
          Key: importKey(owner, repo),
          UpdateExpression: 'SET followEnded = :yes, updatedAt = :now',
          ConditionExpression: 'importId = :id AND attempt = :attempt AND #status IN (:complete, :error)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':yes': true,
            ':now': timestamp,
            ':id': importId,
            ':attempt': attempt,
            ':complete': 'complete',
            ':error': 'error',
          },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: importSyncKey(owner, repo, importId),
          UpdateExpression: 'SET #state = :cutOver, cutOverAt = :now, updatedAt = :now',
          ConditionExpression: '#state = :following',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':cutOver': 'cut_over', ':following': 'following', ':now': timestamp },
        },
      },
    ],
    'cutOver',
  );
  if (outcome === 'ok') return 'ok';
  return outcome.failed.includes(1) ? 'not-following' : 'busy';
}

/** How an attempt of a followed import ended (`recordSyncOutcome`). */
export type SyncOutcome =
  | {
      readonly commitCount: number | null;
      /** The origin's fingerprint taken before this sync (by the scheduler); absent: unknown. */
      readonly originFingerprint?: string | undefined;
      readonly refChanges?: SyncRefChanges;
      /** The revision map's last origin revision as the push step stored it; absent: read from the map. */
      readonly originRevision?: string | null;
      /**
       * The attempt that succeeded: its outcome is recorded once, so a Complete run again (its
       * worker died after recording) does not count its new commits a second time, as none.
       */
      readonly attempt?: number;
    }
  | { readonly errorMessage: string; readonly status?: 'failed' | 'auth_failed' };

/**
 * Records how an attempt of a followed import ended (every attempt after following began is a
 * sync): `last_sync`, and on success `last_synced_at`, the newest origin revision published (the
 * revision map's last entry) and the new commits, counted as the growth of the import's commit
 * count since the last sync. With `dueTime`, the due-time index key moves in the same write
 * (`sync-due.ts`). Nothing when the import does not follow. Conditional on the item read; a
 * concurrent write is read again.
 */
export async function recordSyncOutcome(
  owner: string,
  repo: string,
  importId: number,
  outcome: SyncOutcome,
  dueTime?: DueTime,
): Promise<void> {
  const Key = importSyncKey(owner, repo, importId);
  const revision =
    'errorMessage' in outcome
      ? undefined
      : outcome.originRevision !== undefined
        ? outcome.originRevision
        : ((await lastRevision(owner, repo, importId)) ?? null);
  for (let round = 0; round < 5; round++) {
    const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key, ConsistentRead: true }));
    if (Item?.state !== 'following') return;
    if (
      !('errorMessage' in outcome) &&
      outcome.attempt !== undefined &&
      Item.lastSyncAttempt === outcome.attempt
    )
      return;
    const timestamp = now();
    const values: Record<string, unknown> = { ':following': 'following', ':now': timestamp };
    // Unchanged since read (an item written before `updatedAt` existed has none).
    const unchanged = Item.updatedAt === undefined ? 'attribute_not_exists(updatedAt)' : 'updatedAt = :seen';
    if (Item.updatedAt !== undefined) values[':seen'] = Item.updatedAt;
    const set: string[] = [];
    const remove: string[] = [];
    if ('errorMessage' in outcome) {
      values[':last'] = {
        status: outcome.status ?? 'failed',
        newCommits: 0,
        errorMessage: outcome.errorMessage,
      };
      set.push('lastSync = :last');
    } else {
      const before = typeof Item.commitCount === 'number' ? Item.commitCount : null;
      const after = outcome.commitCount;
      values[':last'] = {
        status: 'succeeded',
        newCommits: before === null || after === null ? 0 : Math.max(0, after - before),
        refChanges: outcome.refChanges ?? { deleted: [], rewritten: [] },
      };
      values[':count'] = after ?? before;
      values[':revision'] = revision ?? null;
      set.push('lastSync = :last, lastSyncedAt = :now, commitCount = :count, originRevision = :revision');
      if (outcome.attempt !== undefined) {
        values[':attempt'] = outcome.attempt;
        set.push('lastSyncAttempt = :attempt');
      }
      // The scheduler skips a sync while the origin's fingerprint equals this one; without one
      // (a sync now, the first import) the next check syncs.
      if (outcome.originFingerprint === undefined) remove.push('originFingerprint');
      else {
        values[':fingerprint'] = outcome.originFingerprint;
        set.push('originFingerprint = :fingerprint');
      }
    }
    if (dueTime) {
      const written = 'errorMessage' in outcome ? Item : { ...Item, lastSyncedAt: timestamp };
      const index = dueIndexOf(owner, repo, importId, written, dueTime);
      if (!carriesIndex(Item, index)) {
        const change = indexUpdate(owner, repo, importId, index);
        if (change.set) set.push(change.set);
        if (change.remove) remove.push(change.remove);
        Object.assign(values, change.values);
      }
    }
    const done = await conditionalWrite(
      db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key,
          UpdateExpression: `SET ${set.join(', ')}, updatedAt = :now${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
          ConditionExpression: `#state = :following AND ${unchanged}`,
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: values,
        }),
      ),
    );
    if (done !== false) return;
  }
}

/**
 * The sync states of several imports, in their order (`off` where an import has no sync item):
 * BatchGetItem, eventually consistent (an overview).
 */
export async function syncStatesOf(
  imports: readonly Pick<Import, 'ownerLogin' | 'repoName' | 'importId'>[],
): Promise<SyncState[]> {
  const keys = imports.map((record) => importSyncKey(record.ownerLogin, record.repoName, record.importId));
  const items = await getItemsInBatches(keys, false);
  return keys.map((key) => (itemOf(items, key)?.state as SyncState | undefined) ?? 'off');
}

/**
 * Whether the repository's import follows its origin (pushes are then refused): the import item,
 * then its sync item; one read when there is no import.
 */
export async function followsOrigin(owner: string, repo: string): Promise<boolean> {
  const record = await importItem(owner, repo);
  if (!record) return false;
  return (await getImportSync(owner, repo, Number(record.importId)))?.state === 'following';
}
