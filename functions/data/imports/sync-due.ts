/**
 * The schedule of followed imports (issue 27): each sync item that is due at some time carries
 * `syncDueIndexKey` (GSI1, sparse), which the services put in line with `nextSyncAt` after every
 * write that moves the schedule (follow, interval, cut-over, a successful sync, a check), so
 * the scheduler finds due syncs with one Query per shard and never scans the table.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SyncSchedule, SyncState } from '#domain/import-sync';
import { conditionalWrite, db, now, queryAll, tableName } from '../client.ts';
import { importSyncKey, SYNC_DUE_SHARDS, syncDueIndexKey, syncDuePartition } from '../keys.ts';

const orNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** When a sync is due by its schedule (`nextSyncAt` of the domain, passed in by the services). */
export type DueTime = (schedule: SyncSchedule) => string | null;

/** The schedule a stored sync item says. */
const scheduleOf = (item: Record<string, unknown>): SyncSchedule => ({
  state: item.state as SyncState,
  intervalMinutes: typeof item.intervalMinutes === 'number' ? item.intervalMinutes : null,
  followingSince: orNull(item.followingSince),
  lastSyncedAt: orNull(item.lastSyncedAt),
  lastCheckedAt: orNull(item.lastCheckedAt),
});

/** The due-time index key a sync item should carry by what it says (undefined: nothing is due). */
export function dueIndexOf(
  owner: string,
  repo: string,
  importId: number,
  item: Record<string, unknown>,
  dueTime: DueTime,
): { readonly GSI1PK: string; readonly GSI1SK: string } | undefined {
  const due = dueTime(scheduleOf(item));
  return due === null ? undefined : syncDueIndexKey(owner, repo, importId, due);
}

/** True when the item already carries `index` (or, for undefined, no index key). */
export const carriesIndex = (item: Record<string, unknown>, index: ReturnType<typeof dueIndexOf>): boolean =>
  item.GSI1PK === index?.GSI1PK && item.GSI1SK === index?.GSI1SK;

/** The update expression's parts that put `index` on the sync item (or take it off). */
export function indexUpdate(
  owner: string,
  repo: string,
  importId: number,
  index: ReturnType<typeof dueIndexOf>,
): { readonly set?: string; readonly remove?: string; readonly values: Record<string, unknown> } {
  if (!index) return { remove: 'GSI1PK, GSI1SK', values: {} };
  return {
    set: 'GSI1PK = :pk, GSI1SK = :sk, ownerLogin = :owner, repoName = :repo, importId = :id',
    values: { ':pk': index.GSI1PK, ':sk': index.GSI1SK, ':owner': owner, ':repo': repo, ':id': importId },
  };
}

/**
 * Puts the sync item's due-time index key in line with what it says now (or removes it when
 * nothing is due: on demand only, cut over). Conditional on the item being unchanged since it was
 * read; a concurrent write is read again.
 */
export async function refreshDue(
  owner: string,
  repo: string,
  importId: number,
  dueTime: DueTime,
): Promise<void> {
  const Key = importSyncKey(owner, repo, importId);
  for (let round = 0; round < 5; round++) {
    const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key, ConsistentRead: true }));
    if (!Item) return;
    const index = dueIndexOf(owner, repo, importId, Item, dueTime);
    if (carriesIndex(Item, index)) return;
    const change = indexUpdate(owner, repo, importId, index);
    const written = await conditionalWrite(
      db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key,
          UpdateExpression: change.set ? `SET ${change.set}` : `REMOVE ${change.remove}`,
          ConditionExpression: 'updatedAt = :seen',
          ExpressionAttributeValues: { ':seen': Item.updatedAt, ...change.values },
        }),
      ),
    );
    if (written !== false) return;
  }
}

/** A sync the schedule says is due. */
export interface DueSync {
  readonly owner: string;
  readonly repo: string;
  readonly importId: number;
  /** The origin's fingerprint at the last successful sync the scheduler started (absent: unknown). */
  readonly originFingerprint?: string;
}

/** Every sync due at `at` (one Query per shard of GSI1; eventually consistent, as GSIs are). */
export async function dueSyncs(at: Date): Promise<DueSync[]> {
  const upper = `${at.toISOString().replace(/\.\d{3}Z$/, 'Z')}~`;
  const shards = await Promise.all(
    Array.from({ length: SYNC_DUE_SHARDS }, (_, shard) =>
      queryAll({
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK <= :upper',
        ExpressionAttributeValues: { ':pk': syncDuePartition(shard), ':upper': upper },
      }),
    ),
  );
  return shards.flatMap(({ items }) =>
    items.map((item) => ({
      owner: String(item.ownerLogin),
      repo: String(item.repoName),
      importId: Number(item.importId),
      ...(typeof item.originFingerprint === 'string' ? { originFingerprint: item.originFingerprint } : {}),
    })),
  );
}

/**
 * The scheduler looked at the origin at `at` (and found nothing new, or started a sync): the
 * schedule moves on an interval from then. Only while following.
 */
export async function recordCheck(
  owner: string,
  repo: string,
  importId: number,
  at: Date,
  dueTime: DueTime,
): Promise<void> {
  const checkedAt = at.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const written = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: importSyncKey(owner, repo, importId),
        UpdateExpression: 'SET lastCheckedAt = :at, updatedAt = :now',
        ConditionExpression: '#state = :following',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':at': checkedAt, ':now': now(), ':following': 'following' },
      }),
    ),
  );
  if (written !== false) await refreshDue(owner, repo, importId, dueTime);
}
