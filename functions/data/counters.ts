import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalWrite, db, now, tableName } from './client.ts';
import { counterKey, type Key } from './keys.ts';
import { TABLE } from './table.ts';

/** Entities with integer ids. */
export type IdKind =
  | 'user'
  | 'app'
  | 'repository'
  | 'authorization'
  | 'grant'
  | 'key'
  | 'import'
  | 'import-batch'
  | 'import-author'
  | 'hook'
  | 'hook-delivery';

/**
 * Ids a process reserves at a time, by kind; a kind not named takes them one by one. Application
 * tokens are created on the hot paths (every code exchange, device grant and refresh), where a
 * counter write per token would be one more DynamoDB call per request and one global hot item
 * (a single item takes about 1,000 writes a second). A block of 10 makes both a tenth; a process
 * that ends leaves the rest of its block unused (ids skip, as GitHub's do). Ids stay unique and
 * increase within a process; across processes (Lambda containers) they interleave, so id order
 * is not creation order (nothing relies on it: the token limit's "oldest" is the ring's issue
 * order). Import authors stay exact: clients poll them with `since`.
 */
const BLOCK_SIZE: Partial<Record<IdKind, number>> = { authorization: 10 };

/** The ids this process has reserved and not handed out yet, by table and kind. */
const reserved = new Map<string, { next: number; last: number }>();
/** A reservation under way, by table and kind, that concurrent callers wait for instead of sending their own. */
const reserving = new Map<string, Promise<void>>();

/** Reserves the next `count` ids of a kind with one atomic UpdateItem ADD; returns the last of them. */
async function reserve(kind: IdKind, count: number): Promise<number> {
  const result = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: counterKey(kind),
      UpdateExpression: 'ADD #value :count SET #type = :type',
      ExpressionAttributeNames: { '#value': 'value', '#type': TABLE.typeAttribute },
      ExpressionAttributeValues: { ':count': count, ':type': 'Counter' },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(result.Attributes?.value);
}

/**
 * The next integer id for an entity kind. The counter only ever grows by atomic ADDs, so
 * concurrent callers (in this process or any other) never get the same id, and a failed create
 * never hands its id out again.
 */
export async function nextId(kind: IdKind): Promise<number> {
  const size = BLOCK_SIZE[kind] ?? 1;
  if (size === 1) return reserve(kind, 1);
  const slot = `${tableName()}|${kind}`;
  for (;;) {
    const block = reserved.get(slot);
    if (block && block.next <= block.last) return block.next++;
    let pending = reserving.get(slot);
    if (!pending) {
      pending = reserve(kind, size)
        .then((last) => {
          reserved.set(slot, { next: last - size + 1, last });
        })
        .finally(() => reserving.delete(slot));
      reserving.set(slot, pending);
    }
    await pending;
  }
}

/**
 * The next `count` integer ids of a kind without a block (`BLOCK_SIZE`), one after the other with
 * no gap: one atomic ADD of `count`.
 */
export async function nextIds(kind: Exclude<IdKind, 'authorization'>, count: number): Promise<number[]> {
  if (count === 0) return [];
  const last = await reserve(kind, count);
  return Array.from({ length: count }, (_, n) => last - count + 1 + n);
}

/**
 * Counts one event in a fixed window's item (`key`, typed `type`, expiring at `expiresAt`): a
 * conditional ADD below `max`, so concurrent events cannot exceed the limit. The window's count
 * with this event, or false when the window is full.
 */
export async function countInWindow(
  key: Key,
  type: string,
  max: number,
  expiresAt: number,
): Promise<number | false> {
  const written = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression:
          'ADD #count :one SET #type = :type, #expiresAt = :expiresAt, #updatedAt = :now, #createdAt = if_not_exists(#createdAt, :now)',
        ConditionExpression: 'attribute_not_exists(#count) OR #count < :max',
        ExpressionAttributeNames: {
          '#count': 'count',
          '#type': TABLE.typeAttribute,
          '#expiresAt': 'expiresAt',
          '#updatedAt': 'updatedAt',
          '#createdAt': 'createdAt',
        },
        ExpressionAttributeValues: {
          ':one': 1,
          ':max': max,
          ':type': type,
          ':expiresAt': expiresAt,
          ':now': now(),
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    ),
  );
  return written === false ? false : Number(written.Attributes?.count);
}
