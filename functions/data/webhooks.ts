import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Position } from '#domain/cursor-pagination';
import type { HookDelivery, HookResponse, Webhook } from '#domain/webhooks';
import { batchWrite, conditionalWrite, db, now, queryAll, tableName, transactWithRetry } from './client.ts';
import { countInWindow, nextId } from './counters.ts';
import {
  HOOK_PREFIX,
  hookDeliveriesPrefix,
  hookDeliveryKey,
  hookKey,
  hookRedeliveryWindowKey,
  repoPartition,
} from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, TABLE, typed } from './table.ts';

/*
 * Repository webhooks and their deliveries, in the repository's partition: hooks under `HOOK#`,
 * each hook's deliveries under `HOOKDELIVERY#<hook>#` (TTL'd: GitHub keeps three days). A
 * delivery is only written while its hook exists, and deleting the hook deletes them.
 */

/** Deliveries are kept this long (GitHub shows the last three days), then DynamoDB's TTL drops them. */
const DELIVERY_RETENTION_SECONDS = 3 * 24 * 3600;

const toWebhook = (item: Record<string, unknown>): Webhook => ({
  id: Number(item.id),
  owner: String(item.owner),
  repo: String(item.repo),
  url: String(item.url),
  contentType: item.contentType === 'json' ? 'json' : 'form',
  insecureSsl: item.insecureSsl === '1' ? '1' : '0',
  events: (item.events as string[] | undefined) ?? [],
  active: Boolean(item.active),
  ...(typeof item.sealedSecret === 'string' ? { sealedSecret: item.sealedSecret } : {}),
  lastResponse: item.lastResponse as HookResponse,
  apiUrl: String(item.apiUrl),
  webUrl: String(item.webUrl),
  createdAt: String(item.createdAt),
  updatedAt: String(item.updatedAt),
});

/** A new hook's id, before it is written (its secret is sealed to it). */
export const newHookId = (): Promise<number> => nextId('hook');

/** Writes a new hook (its id from `newHookId`). */
export async function putWebhook(hook: Webhook): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...hookKey(hook.owner, hook.repo, hook.id), ...typed('Webhook'), ...hook },
      ConditionExpression: ITEM_ABSENT,
    }),
  );
}

/** Replaces a hook's settings (an edit); false when the hook is gone. */
export async function replaceWebhook(hook: Webhook): Promise<boolean> {
  const written = await conditionalWrite(
    db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...hookKey(hook.owner, hook.repo, hook.id), ...typed('Webhook'), ...hook, updatedAt: now() },
        ConditionExpression: ITEM_EXISTS,
      }),
    ),
  );
  return written !== false;
}

export async function getWebhook(owner: string, repo: string, id: number): Promise<Webhook | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: hookKey(owner, repo, id), ConsistentRead: true }),
  );
  return Item ? toWebhook(Item) : undefined;
}

/** A repository's hooks in id order. */
export async function listWebhooks(owner: string, repo: string): Promise<Webhook[]> {
  const { items } = await queryAll({
    KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
    ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#sk': TABLE.sortKey },
    ExpressionAttributeValues: { ':pk': repoPartition(owner, repo), ':prefix': HOOK_PREFIX },
    ConsistentRead: true,
  });
  return items.map(toWebhook);
}

/** Deletes a hook; false when there was none. Its deliveries go with `deleteDeliveries`. */
export async function deleteWebhook(owner: string, repo: string, id: number): Promise<boolean> {
  const deleted = await conditionalWrite(
    db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: hookKey(owner, repo, id),
        ConditionExpression: ITEM_EXISTS,
      }),
    ),
  );
  return deleted !== false;
}

/** What a hook's last delivery got, when the hook still exists. */
export async function recordLastResponse(
  owner: string,
  repo: string,
  id: number,
  response: HookResponse,
): Promise<void> {
  await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: hookKey(owner, repo, id),
        UpdateExpression: 'SET lastResponse = :response',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeValues: { ':response': response },
      }),
    ),
  );
}

const toDelivery = (item: Record<string, unknown>): HookDelivery => item.delivery as HookDelivery;

/** A new delivery's id. */
export const newDeliveryId = (): Promise<number> => nextId('hook-delivery');

const deliveryExpired = (item: Record<string, unknown>): boolean =>
  Number(item[TABLE.ttlAttribute]) * 1000 < Date.now();

/**
 * Records one delivery attempt (kept for three days) if its hook still exists: false when the
 * hook was deleted meanwhile, so a delivery under way leaves nothing behind a deleted hook.
 */
export async function putDelivery(owner: string, repo: string, delivery: HookDelivery): Promise<boolean> {
  const timestamp = now();
  const outcome = await transactWithRetry(
    [
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: hookKey(owner, repo, delivery.hookId),
          ConditionExpression: ITEM_EXISTS,
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...hookDeliveryKey(owner, repo, delivery.hookId, delivery.id),
            ...typed('HookDelivery'),
            delivery,
            createdAt: timestamp,
            updatedAt: timestamp,
            [TABLE.ttlAttribute]: Math.floor(Date.now() / 1000) + DELIVERY_RETENTION_SECONDS,
          },
          // Each attempt its own entry, never overwritten (a re-run after a death finds a taken one first).
          ConditionExpression: ITEM_ABSENT,
        },
      },
    ],
    'record a webhook delivery',
  );
  return outcome === 'ok';
}

export async function getDelivery(
  owner: string,
  repo: string,
  hookId: number,
  id: number,
): Promise<HookDelivery | undefined> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: hookDeliveryKey(owner, repo, hookId, id),
      ConsistentRead: true,
    }),
  );
  if (!Item || deliveryExpired(Item)) return undefined;
  return toDelivery(Item);
}

const deliveriesOf = (owner: string, repo: string, hookId: number) => ({
  KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
  ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#sk': TABLE.sortKey },
  ExpressionAttributeValues: { ':pk': repoPartition(owner, repo), ':prefix': hookDeliveriesPrefix(hookId) },
  ConsistentRead: true,
});

/**
 * The hook's recorded attempts of delivery `guid` among its newest 100 deliveries (enough for a
 * job run again within minutes of its first run: Lambda's event queue retrying an invocation that
 * died after it had delivered and recorded).
 */
export async function attemptsOfDelivery(
  owner: string,
  repo: string,
  hookId: number,
  guid: string,
): Promise<HookDelivery[]> {
  const query = deliveriesOf(owner, repo, hookId);
  const { Items = [] } = await db().send(
    new QueryCommand({
      ...query,
      TableName: tableName(),
      ScanIndexForward: false,
      Limit: 100,
      FilterExpression: '#delivery.#guid = :guid',
      ExpressionAttributeNames: {
        ...query.ExpressionAttributeNames,
        '#delivery': 'delivery',
        '#guid': 'guid',
      },
      ExpressionAttributeValues: { ...query.ExpressionAttributeValues, ':guid': guid },
    }),
  );
  return Items.filter((item) => !deliveryExpired(item)).map(toDelivery);
}

/**
 * One page of a hook's deliveries, newest first, in one Query: the first `limit` from the newest,
 * after a delivery (older ones) or before it (newer ones), and whether another lies beyond the
 * page in the direction read. Deliveries past their three days that the TTL has not yet removed
 * are left out (they are the oldest).
 */
export async function readDeliveries(
  owner: string,
  repo: string,
  hookId: number,
  from: Position | undefined,
  limit: number,
): Promise<{ items: HookDelivery[]; more: boolean }> {
  const backward = from !== undefined && 'before' in from;
  const id = from === undefined ? undefined : 'before' in from ? from.before : from.after;
  const { Items = [] } = await db().send(
    new QueryCommand({
      ...deliveriesOf(owner, repo, hookId),
      TableName: tableName(),
      ScanIndexForward: backward,
      ...(id === undefined ? {} : { ExclusiveStartKey: hookDeliveryKey(owner, repo, hookId, id) }),
      // One more than asked for tells whether there are more.
      Limit: limit + 1,
    }),
  );
  const fresh = Items.filter((item) => !deliveryExpired(item)).map(toDelivery);
  const page = fresh.slice(0, limit);
  return { items: backward ? page.reverse() : page, more: fresh.length > limit };
}

/** Deliveries deleted with their hook, at most (a hook pinged more often in three days keeps the rest until the TTL). */
const MAX_DELETED_DELIVERIES = 2000;

/**
 * Deletes a hook's deliveries (once the hook is gone, so none is added meanwhile): Query pages of
 * keys and BatchWriteItem, `MAX_DELETED_DELIVERIES` at most. Returns how many were deleted and
 * whether any are left.
 */
export async function deleteDeliveries(
  owner: string,
  repo: string,
  hookId: number,
): Promise<{ deleted: number; left: boolean }> {
  let deleted = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new QueryCommand({
        ...deliveriesOf(owner, repo, hookId),
        TableName: tableName(),
        ProjectionExpression: '#pk, #sk',
        ExclusiveStartKey: startKey,
        Limit: 100,
      }),
    );
    const keys = (page.Items ?? []).map((item) => ({ PK: item.PK, SK: item.SK }));
    await batchWrite(keys.map((Key) => ({ DeleteRequest: { Key } })));
    deleted += keys.length;
    startKey = page.LastEvaluatedKey;
  } while (startKey && deleted < MAX_DELETED_DELIVERIES);
  return { deleted, left: startKey !== undefined };
}

/**
 * Counts one redelivery by hand of the hook in fixed window `window.number`, below `window.max`
 * together with the window before it (so no burst fits across a window's end): a strongly
 * consistent read of the previous window, then a conditional ADD below what it leaves, so
 * concurrent requests cannot exceed the limit. False when the allowance is spent.
 */
export async function countRedelivery(
  owner: string,
  repo: string,
  hookId: number,
  window: { readonly number: number; readonly max: number; readonly expiresAt: number },
): Promise<boolean> {
  const { Item: previous } = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: hookRedeliveryWindowKey(owner, repo, hookId, window.number - 1),
      ConsistentRead: true,
    }),
  );
  const allowed = window.max - Number(previous?.count ?? 0);
  if (allowed <= 0) return false;
  const key = hookRedeliveryWindowKey(owner, repo, hookId, window.number);
  return (await countInWindow(key, 'HookRedeliveryWindow', allowed, window.expiresAt)) !== false;
}
