import {
  GetCommand,
  PutCommand,
  type PutCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Scope } from '#domain/scopes';
import { getAppWith, type StoredApp } from './apps.ts';
import { conditionalWrite, db, now, type TransactItem, tableName, transact } from './client.ts';
import { codeKey } from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, typed } from './table.ts';

/**
 * OAuth authorization codes. Only the code's SHA-256 is stored (in the key). Single use is decided
 * by the database: the exchange claims the code in the transaction that creates its token (a
 * conditional update, `attribute_not_exists(exchangedAt)`, recording the token's hash and its
 * authorization id), so a code is spent exactly when its token exists; a later exchange marks the
 * code `reusedAt` and revokes that token (see `services/oauth-flow.ts`).
 */
export interface StoredCode {
  readonly codeHash: string;
  readonly clientId: string;
  readonly login: string;
  /** The normalized `redirect_uri` of the authorize request, or null when it had none. */
  readonly redirectUri: string | null;
  readonly scopes: readonly Scope[];
  /** The S256 PKCE challenge, or null. */
  readonly codeChallenge: string | null;
  /** Epoch seconds; also the TTL attribute (DynamoDB deletes lazily, so readers check it). */
  readonly expiresAt: number;
  readonly exchangedAt: string | null;
  /** Hash of the token the first exchange minted (set when it claimed the code). */
  readonly tokenHash: string | null;
  /** The authorization the first exchange created (set once it exists). */
  readonly authorizationId: number | null;
  readonly reusedAt: string | null;
  /**
   * The user's grant generation for the application when the code was issued: a grant revocation
   * raises it, and the exchange mints only while it is unchanged.
   */
  readonly grantGeneration: number;
  /** The protected resource the code's token will be for (RFC 8707); null: the REST API. */
  readonly resource: string | null;
}

export type NewCode = Pick<
  StoredCode,
  | 'codeHash'
  | 'clientId'
  | 'login'
  | 'redirectUri'
  | 'scopes'
  | 'codeChallenge'
  | 'expiresAt'
  | 'grantGeneration'
> & { readonly resource?: string | null };

const toCode = (item: Record<string, unknown>): StoredCode => ({
  codeHash: String(item.codeHash),
  clientId: String(item.clientId),
  login: String(item.login),
  redirectUri: (item.redirectUri as string | null | undefined) ?? null,
  scopes: (item.scopes as Scope[] | undefined) ?? [],
  codeChallenge: (item.codeChallenge as string | null | undefined) ?? null,
  expiresAt: Number(item.expiresAt),
  exchangedAt: (item.exchangedAt as string | undefined) ?? null,
  tokenHash: (item.tokenHash as string | undefined) ?? null,
  authorizationId: item.authorizationId === undefined ? null : Number(item.authorizationId),
  reusedAt: (item.reusedAt as string | undefined) ?? null,
  grantGeneration: Number(item.grantGeneration ?? 0),
  resource: (item.resource as string | undefined) ?? null,
});

// Request builders: pure, so unit tests can read them as plain objects.

export function putCodeRequest(code: NewCode, timestamp: string): PutCommandInput {
  return {
    TableName: tableName(),
    Item: {
      ...codeKey(code.codeHash),
      ...typed('AuthorizationCode'),
      codeHash: code.codeHash,
      clientId: code.clientId,
      login: code.login,
      redirectUri: code.redirectUri,
      scopes: code.scopes,
      codeChallenge: code.codeChallenge,
      expiresAt: code.expiresAt,
      grantGeneration: code.grantGeneration,
      ...(code.resource ? { resource: code.resource } : {}),
      createdAt: timestamp,
      updatedAt: timestamp,
    },
    // 160 random bits never collide; the condition makes sure a collision could not overwrite.
    ConditionExpression: ITEM_ABSENT,
  };
}

/**
 * The exchange's claim, as an action of the transaction that creates the token: only while the
 * code exists and was never exchanged. A failed condition returns the code as it is.
 */
export function claimCodeItem(
  codeHash: string,
  claim: { readonly tokenHash: string; readonly authorizationId: number },
  timestamp: string,
): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: codeKey(codeHash),
      UpdateExpression:
        'SET #exchangedAt = :now, #tokenHash = :tokenHash, #authorizationId = :id, #updatedAt = :now',
      ConditionExpression: `${ITEM_EXISTS} AND attribute_not_exists(#exchangedAt)`,
      ExpressionAttributeNames: {
        '#exchangedAt': 'exchangedAt',
        '#tokenHash': 'tokenHash',
        '#authorizationId': 'authorizationId',
        '#updatedAt': 'updatedAt',
      },
      ExpressionAttributeValues: {
        ':now': timestamp,
        ':tokenHash': claim.tokenHash,
        ':id': claim.authorizationId,
      },
    },
  };
}

export function markReusedRequest(codeHash: string, timestamp: string): UpdateCommandInput {
  return {
    TableName: tableName(),
    Key: codeKey(codeHash),
    UpdateExpression: 'SET #reusedAt = if_not_exists(#reusedAt, :now), #updatedAt = :now',
    ConditionExpression: ITEM_EXISTS,
    ExpressionAttributeNames: { '#reusedAt': 'reusedAt', '#updatedAt': 'updatedAt' },
    ExpressionAttributeValues: { ':now': timestamp },
    ReturnValues: 'ALL_NEW',
  };
}

/** Stores a new code; with `along` (a consent's security event), in one transaction with those items. */
export async function putCode(code: NewCode, along: readonly TransactItem[] = []): Promise<void> {
  const put = putCodeRequest(code, now());
  if (along.length === 0) {
    await db().send(new PutCommand(put));
    return;
  }
  // The code's key is 160 random bits' hash and the event is named by it: a cancellation is only
  // a concurrent transaction on the person's partition, and the pair is sent once more.
  for (let attempt = 0; attempt < 3; attempt++)
    if ((await transact([{ Put: put } as TransactItem, ...along])) === 'ok') return;
  throw new Error('authorization code not stored');
}

export async function getCode(codeHash: string): Promise<StoredCode | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: codeKey(codeHash), ConsistentRead: true }),
  );
  return Item ? toCode(Item) : undefined;
}

/**
 * The application and the code presented to it, in one strongly consistent BatchGetItem: what the
 * token endpoint authenticates and then checks before it spends the code.
 */
export async function getAppAndCode(
  clientId: string,
  codeHash: string,
): Promise<{ app?: StoredApp; code?: StoredCode }> {
  const { app, item } = await getAppWith(clientId, codeKey(codeHash), toCode);
  return { ...(app ? { app } : {}), ...(item ? { code: item } : {}) };
}

/** Runs a conditional update; false when its condition did not hold. */
async function conditionally(input: UpdateCommandInput): Promise<Record<string, unknown> | false> {
  const written = await conditionalWrite(db().send(new UpdateCommand(input)));
  return written === false ? false : (written.Attributes ?? {});
}

/** Marks a code as presented again; returns it as it now is, or undefined when it is gone. */
export async function markReused(codeHash: string): Promise<StoredCode | undefined> {
  const item = await conditionally(markReusedRequest(codeHash, now()));
  return item === false ? undefined : toCode(item);
}
