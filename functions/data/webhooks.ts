import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { HookDelivery, HookResponse, Webhook } from '#domain/webhooks';
import { conditionalWrite, db, now, queryAll, tableName } from './client.ts';
import { nextId } from './counters.ts';
import { HOOK_PREFIX, hookDeliveriesPrefix, hookDeliveryKey, hookKey, repoPartition } from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, TABLE, typed } from './table.ts';

/*
 * Repository webhooks and their deliveries, in the repository's partition: hooks under `HOOK#`,
 * each hook's deliveries under `HOOKDELIVERY#<hook>#` (TTL'd: GitHub keeps three days).
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

/** Deletes a hook; false when there was none. Its deliveries expire by TTL. */
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

/** Records one delivery attempt (kept for three days). */
export async function putDelivery(owner: string, repo: string, delivery: HookDelivery): Promise<void> {
  const timestamp = now();
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...hookDeliveryKey(owner, repo, delivery.hookId, delivery.id),
        ...typed('HookDelivery'),
        delivery,
        createdAt: timestamp,
        updatedAt: timestamp,
        [TABLE.ttlAttribute]: Math.floor(Date.now() / 1000) + DELIVERY_RETENTION_SECONDS,
      },
    }),
  );
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
  if (!Item || Number(Item[TABLE.ttlAttribute]) * 1000 < Date.now()) return undefined;
  return toDelivery(Item);
}

/** A hook's deliveries, newest first: at most `limit`. */
export async function listDeliveries(
  owner: string,
  repo: string,
  hookId: number,
  limit: number,
): Promise<HookDelivery[]> {
  const { items } = await queryAll(
    {
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#sk': TABLE.sortKey },
      ExpressionAttributeValues: {
        ':pk': repoPartition(owner, repo),
        ':prefix': hookDeliveriesPrefix(hookId),
      },
      ScanIndexForward: false,
      ConsistentRead: true,
    },
    limit,
  );
  return items.map(toDelivery);
}
