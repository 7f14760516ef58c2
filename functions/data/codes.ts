import {
  GetCommand,
  PutCommand,
  type PutCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Scope } from '#domain/scopes';
import { conditionalWrite, db, now, tableName } from './client.ts';
import { codeKey } from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, typed } from './table.ts';

/**
 * OAuth authorization codes. Only the code's SHA-256 is stored (in the key). Single use is decided
 * by the database: the first exchange claims the code with a conditional update
 * (`attribute_not_exists(exchangedAt)`), recording the hash of the token it is about to mint; a
 * later exchange marks the code `reusedAt`, and whichever of "token recorded" and "reuse marked"
 * comes second revokes that token (see `domain/oauth-flow.ts`).
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
>;

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
      createdAt: timestamp,
      updatedAt: timestamp,
    },
    // 160 random bits never collide; the condition makes sure a collision could not overwrite.
    ConditionExpression: ITEM_ABSENT,
  };
}

export function claimCodeRequest(codeHash: string, tokenHash: string, timestamp: string): UpdateCommandInput {
  return {
    TableName: tableName(),
    Key: codeKey(codeHash),
    UpdateExpression: 'SET #exchangedAt = :now, #tokenHash = :tokenHash, #updatedAt = :now',
    ConditionExpression: `${ITEM_EXISTS} AND attribute_not_exists(#exchangedAt)`,
    ExpressionAttributeNames: {
      '#exchangedAt': 'exchangedAt',
      '#tokenHash': 'tokenHash',
      '#updatedAt': 'updatedAt',
    },
    ExpressionAttributeValues: { ':now': timestamp, ':tokenHash': tokenHash },
  };
}

export function recordExchangeRequest(
  codeHash: string,
  authorizationId: number,
  timestamp: string,
): UpdateCommandInput {
  return {
    TableName: tableName(),
    Key: codeKey(codeHash),
    UpdateExpression: 'SET #authorizationId = :id, #updatedAt = :now',
    ConditionExpression: `${ITEM_EXISTS} AND attribute_not_exists(#reusedAt)`,
    ExpressionAttributeNames: {
      '#authorizationId': 'authorizationId',
      '#reusedAt': 'reusedAt',
      '#updatedAt': 'updatedAt',
    },
    ExpressionAttributeValues: { ':id': authorizationId, ':now': timestamp },
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

export async function putCode(code: NewCode): Promise<void> {
  await db().send(new PutCommand(putCodeRequest(code, now())));
}

export async function getCode(codeHash: string): Promise<StoredCode | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: codeKey(codeHash), ConsistentRead: true }),
  );
  return Item ? toCode(Item) : undefined;
}

/** Runs a conditional update; false when its condition did not hold. */
async function conditionally(input: UpdateCommandInput): Promise<Record<string, unknown> | false> {
  const written = await conditionalWrite(db().send(new UpdateCommand(input)));
  return written === false ? false : (written.Attributes ?? {});
}

/** Claims an unexchanged code for the token about to be minted; false when it was already claimed (or is gone). */
export async function claimCode(codeHash: string, tokenHash: string): Promise<boolean> {
  return (await conditionally(claimCodeRequest(codeHash, tokenHash, now()))) !== false;
}

export function releaseClaimRequest(
  codeHash: string,
  tokenHash: string,
  timestamp: string,
): UpdateCommandInput {
  return {
    TableName: tableName(),
    Key: codeKey(codeHash),
    UpdateExpression: 'REMOVE #exchangedAt, #tokenHash SET #updatedAt = :now',
    ConditionExpression:
      '#tokenHash = :tokenHash AND attribute_not_exists(#reusedAt) AND attribute_not_exists(#authorizationId)',
    ExpressionAttributeNames: {
      '#exchangedAt': 'exchangedAt',
      '#tokenHash': 'tokenHash',
      '#reusedAt': 'reusedAt',
      '#authorizationId': 'authorizationId',
      '#updatedAt': 'updatedAt',
    },
    ExpressionAttributeValues: { ':tokenHash': tokenHash, ':now': timestamp },
  };
}

/**
 * Gives a claimed code back when minting its token failed (nothing was issued), so that the
 * client may simply retry the exchange; a no-op once the code was presented again.
 */
export async function releaseClaim(codeHash: string, tokenHash: string): Promise<void> {
  await conditionally(releaseClaimRequest(codeHash, tokenHash, now()));
}

/** Records the minted authorization; false when a reuse was marked first (the caller must revoke it). */
export async function recordExchange(codeHash: string, authorizationId: number): Promise<boolean> {
  return (await conditionally(recordExchangeRequest(codeHash, authorizationId, now()))) !== false;
}

/** Marks a code as presented again; returns it as it now is, or undefined when it is gone. */
export async function markReused(codeHash: string): Promise<StoredCode | undefined> {
  const item = await conditionally(markReusedRequest(codeHash, now()));
  return item === false ? undefined : toCode(item);
}
