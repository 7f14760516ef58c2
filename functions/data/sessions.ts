import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Session } from '#domain/sessions';
import { db, now, tableName } from './client.ts';
import { sessionKey } from './keys.ts';
import { ITEM_ABSENT, typed } from './table.ts';

/** Stores a new session (keyed by the hash of its cookie value; the value itself is never stored). */
export async function putSession(session: Session): Promise<void> {
  const timestamp = now();
  await db().send(
    new PutCommand({
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
    }),
  );
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
