import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type {
  SecurityActor,
  SecurityEvent,
  SecurityEventKind,
  SecuritySubject,
  StoredSecurityEvent,
} from '#domain/security-log';
import { db, type TransactItem, tableName, transact } from './client.ts';
import { SECURITY_EVENT_PREFIX, securityEventIdKey, securityEventKey, userPartition } from './keys.ts';
import { ITEM_ABSENT, TABLE, typed } from './table.ts';

/**
 * The security log's items (keys.ts: `SECLOG#<created_at>#<id>` and the marker `SECLOGID#<id>`).
 * An event is written either inside the transaction of what it records (`securityEventPuts`) or
 * after it, once (`putSecurityEventOnce`); failed sign-ins are counted into one item per address
 * and minute (`countFailedSignIn`).
 */

function eventItem({ event, action, expiresAt }: StoredSecurityEvent): Record<string, unknown> {
  return {
    ...securityEventKey(event.login, event.createdAt, event.id),
    ...typed('SecurityEvent'),
    eventId: event.id,
    login: event.login,
    kind: event.kind,
    action,
    actor: event.actor,
    address: event.origin.address,
    userAgent: event.origin.userAgent,
    subject: event.subject,
    createdAt: event.createdAt,
    updatedAt: event.createdAt,
    expiresAt,
  };
}

/**
 * The event and its marker, both conditional on being new: added to the transaction of what the
 * event records, the two commit or fail with it.
 */
export function securityEventPuts(stored: StoredSecurityEvent): TransactItem[] {
  const { event, expiresAt } = stored;
  return [
    { Put: { TableName: tableName(), Item: eventItem(stored), ConditionExpression: ITEM_ABSENT } },
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...securityEventIdKey(event.login, event.id),
          ...typed('SecurityEventId'),
          createdAt: event.createdAt,
          updatedAt: event.createdAt,
          expiresAt,
        },
        ConditionExpression: ITEM_ABSENT,
      },
    },
  ];
}

/**
 * Records an event after what it records committed: true when it is new, false when an event of
 * its id is already there (the same action recorded before, at whatever time).
 */
export async function putSecurityEventOnce(stored: StoredSecurityEvent): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    const outcome = await transact(securityEventPuts(stored));
    if (outcome === 'ok') return true;
    if (outcome !== 'conflict') return false;
    // Another writer of the same event at the same moment: whichever commits, it is recorded.
    if (attempt >= 3) return false;
  }
}

/**
 * Counts one failed sign-in into its address's item of the minute (`event.createdAt` is the
 * minute's start, `event.id` names the account, address and minute): made by the first failure,
 * counted up by the rest (one atomic UpdateItem, whatever arrives together). Returns the count
 * after this one.
 */
export async function countFailedSignIn(stored: StoredSecurityEvent, at: string): Promise<number> {
  const { event } = stored;
  const item = eventItem(stored);
  const { Attributes } = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: securityEventKey(event.login, event.createdAt, event.id),
      UpdateExpression:
        'ADD #count :one SET #subject = if_not_exists(#subject, :subject), #type = :type, eventId = :id, login = :login, #kind = :kind, #action = :action, actor = :actor, address = :address, userAgent = :agent, createdAt = :created, updatedAt = :at, expiresAt = :expires',
      ExpressionAttributeNames: {
        '#subject': 'subject',
        '#count': 'count',
        '#type': TABLE.typeAttribute,
        '#action': 'action',
        '#kind': 'kind',
      },
      ExpressionAttributeValues: {
        ':one': 1,
        ':kind': event.kind,
        ':subject': event.subject,
        ':type': item[TABLE.typeAttribute],
        ':id': event.id,
        ':login': event.login,
        ':action': item.action,
        ':actor': event.actor,
        ':address': event.origin.address,
        ':agent': event.origin.userAgent,
        ':created': event.createdAt,
        ':at': at,
        ':expires': item.expiresAt,
      },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(Attributes?.count ?? 1);
}

function toEvent(item: Record<string, unknown>): SecurityEvent {
  return {
    id: String(item.eventId),
    login: String(item.login),
    kind: String(item.kind) as SecurityEventKind,
    actor: item.actor as SecurityActor,
    origin: {
      address: (item.address as string | null | undefined) ?? null,
      userAgent: (item.userAgent as string | null | undefined) ?? null,
    },
    createdAt: String(item.createdAt),
    subject: {
      ...((item.subject as SecuritySubject | undefined) ?? {}),
      // A counted event (failed sign-ins) keeps its count beside the subject.
      ...(item.count !== undefined ? { count: Number(item.count) } : {}),
    },
  };
}

/** The part of an event's sort key after the prefix: what a cursor carries. */
export const securityEventPosition = (event: SecurityEvent): string => `${event.createdAt}#${event.id}`;

/**
 * One page of a user's events, newest first, in one Query: the first `limit` from the newest, or
 * after `after` (an event's position), and whether more lie beyond. Events past their 90 days that
 * the TTL has not removed yet are left out (they are the oldest).
 */
export async function readSecurityEvents(
  login: string,
  after: string | undefined,
  limit: number,
): Promise<{ events: SecurityEvent[]; more: boolean }> {
  const { Items = [] } = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: `${TABLE.partitionKey} = :pk AND begins_with(${TABLE.sortKey}, :prefix)`,
      ExpressionAttributeValues: { ':pk': userPartition(login), ':prefix': SECURITY_EVENT_PREFIX },
      ScanIndexForward: false,
      ...(after === undefined
        ? {}
        : { ExclusiveStartKey: { PK: userPartition(login), SK: `${SECURITY_EVENT_PREFIX}${after}` } }),
      // One more than asked for tells whether there are more.
      Limit: limit + 1,
    }),
  );
  const nowSeconds = Date.now() / 1000;
  const live = Items.filter((item) => Number(item.expiresAt) > nowSeconds).map(toEvent);
  return { events: live.slice(0, limit), more: live.length > limit };
}
