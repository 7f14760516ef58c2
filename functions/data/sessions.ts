import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Session } from '#domain/sessions';
import { db, now, type TransactItem, tableName, transact } from './client.ts';
import { sessionKey } from './keys.ts';
import { ITEM_ABSENT, typed } from './table.ts';

/**
 * Stores a new session (keyed by the hash of its cookie value; the value itself is never stored);
 * with `along` (a sign-in's security event), in one transaction with those items.
 */
export async function putSession(session: Session, along: readonly TransactItem[] = []): Promise<void> {
  const timestamp = now();
  const put = {
    TableName: tableName(),
    Item: {
      ...sessionKey(session.idHash),
      ...typed('Session'),
      idHash: session.idHash,
      login: session.login,
      csrf: session.csrf,
      pendingOtp: session.pendingOtp,
      expiresAt: session.expiresAt,
      createdAt: timestamp,
      updatedAt: timestamp,
    },
    ConditionExpression: ITEM_ABSENT,
  };
  if (along.length === 0) {
    await db().send(new PutCommand(put));
    return;
  }
  const outcome = await transact([{ Put: put }, ...along]);
  // A new session's key is 32 random bytes' hash and the event's id is derived from it: neither
  // can exist already, so only a concurrent transaction can cancel this one, and it is sent again.
  if (outcome !== 'ok' && (await transact([{ Put: put }, ...along])) !== 'ok')
    throw new Error('session not stored');
}

/** The stored session with this cookie hash, expired or not. */
export async function getSession(idHash: string): Promise<Session | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: sessionKey(idHash) }));
  if (!Item) return undefined;
  return {
    idHash: String(Item.idHash),
    login: String(Item.login),
    csrf: String(Item.csrf),
    pendingOtp: Boolean(Item.pendingOtp),
    expiresAt: Number(Item.expiresAt),
  };
}

export async function deleteSession(idHash: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: sessionKey(idHash) }));
}
