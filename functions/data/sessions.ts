import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  hashSecretValue,
  newSecret,
  PENDING_OTP_SECONDS,
  SESSION_SECONDS,
  type Session,
} from '#domain/sessions';
import { db, now, tableName } from './client.ts';
import { sessionKey } from './keys.ts';
import { ITEM_ABSENT, typed } from './table.ts';

/** Starts a session; returns the cookie value (shown once) and the session. */
export async function createSession(
  login: string,
  pendingOtp: boolean,
): Promise<{ cookie: string; session: Session }> {
  const cookie = newSecret();
  const idHash = hashSecretValue(cookie);
  const expiresAt = Math.floor(Date.now() / 1000) + (pendingOtp ? PENDING_OTP_SECONDS : SESSION_SECONDS);
  const session: Session = { idHash, login, csrf: newSecret(), pendingOtp, expiresAt };
  const timestamp = now();
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...sessionKey(idHash),
        ...typed('Session'),
        ...session,
        createdAt: timestamp,
        updatedAt: timestamp,
      },
      ConditionExpression: ITEM_ABSENT,
    }),
  );
  return { cookie, session };
}

/** The live session for a cookie value; expired ones count as absent (TTL deletion is lazy). */
export async function getSession(cookie: string): Promise<Session | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: sessionKey(hashSecretValue(cookie)) }),
  );
  if (!Item || Number(Item.expiresAt) <= Math.floor(Date.now() / 1000)) return undefined;
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
