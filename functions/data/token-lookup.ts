import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Authorization } from '#domain/authorizations';
import type { Scope } from '#domain/scopes';
import { log } from '#shared/log';
import { getAppWith, type StoredApp, toAppState } from './apps.ts';
import { toAuthorization } from './authorization-state.ts';
import { db, getItems, itemOf, tableName, transact } from './client.ts';
import { appStateKey, authorizationKey, tokenKey } from './keys.ts';
import { ITEM_EXISTS } from './table.ts';

/** What a token-authenticated request needs, in one strongly consistent GetItem. */
export interface TokenLookup {
  readonly login: string;
  readonly authorizationId: number;
  readonly clientId: string;
  readonly scopes: readonly Scope[];
  readonly tokenHash: string;
  readonly lastUsedAt: string | null;
  /** The authorization's fields, as copied onto the lookup item. */
  readonly authorization: Authorization;
}

export const toTokenLookup = (item: Record<string, unknown>, tokenHash: string): TokenLookup => ({
  login: String(item.login),
  authorizationId: Number(item.authorizationId),
  clientId: String(item.clientId ?? ''),
  scopes: (item.scopes as Scope[] | undefined) ?? [],
  tokenHash,
  lastUsedAt: (item.lastUsedAt as string | null | undefined) ?? null,
  // Not `{ ...item, id }`: a spread copy then a new key is a V8 slow path (about 2 µs a request).
  authorization: toAuthorization(item, item.authorizationId),
});

export async function lookupToken(tokenHash: string): Promise<TokenLookup | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: tokenKey(tokenHash), ConsistentRead: true }),
  );
  return Item ? toTokenLookup(Item, tokenHash) : undefined;
}

/**
 * An OAuth app token's lookup and, in the same strongly consistent round trip, whether its
 * application is suspended, from the state item of the tag the token carries. `appSuspended` is
 * undefined when that item does not hold the state of the token's application (a token minted
 * before tags, whose tag position is random; an application made before the state items): the
 * caller then reads the application itself.
 */
export async function lookupAppToken(
  tokenHash: string,
  tag: string,
): Promise<{ lookup?: TokenLookup; appSuspended?: boolean }> {
  const tokenAt = tokenKey(tokenHash);
  const stateAt = appStateKey(tag);
  const items = await getItems([tokenAt, stateAt], true);
  const item = itemOf(items, tokenAt);
  if (!item) return {};
  const lookup = toTokenLookup(item, tokenHash);
  const appSuspended = lookup.clientId
    ? toAppState(itemOf(items, stateAt)).suspended(lookup.clientId)
    : undefined;
  return { lookup, ...(appSuspended === undefined ? {} : { appSuspended }) };
}

/**
 * An application and a token's lookup in one strongly consistent round trip: what the
 * application-side token endpoints authenticate and act on.
 */
export async function getAppAndToken(
  clientId: string,
  tokenHash: string,
): Promise<{ app?: StoredApp; token?: TokenLookup }> {
  const { app, item } = await getAppWith(clientId, tokenKey(tokenHash), (found) =>
    toTokenLookup(found, tokenHash),
  );
  return { ...(app ? { app } : {}), ...(item ? { token: item } : {}) };
}

/**
 * Records that a token was used, on its lookup and its authorization. Conditional on both still
 * existing, so a token revoked meanwhile is not resurrected; losing the race is harmless.
 */
export async function recordTokenUse(lookup: TokenLookup, timestamp: string): Promise<void> {
  // A cancelled transaction means the token was revoked or reset meanwhile: nothing to record.
  // Bookkeeping never fails the request it rides on.
  await transact([
    {
      Update: {
        TableName: tableName(),
        Key: tokenKey(lookup.tokenHash),
        UpdateExpression: 'SET #lastUsedAt = :now',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeNames: { '#lastUsedAt': 'lastUsedAt' },
        ExpressionAttributeValues: { ':now': timestamp },
      },
    },
    {
      Update: {
        TableName: tableName(),
        Key: authorizationKey(lookup.login, lookup.authorizationId),
        UpdateExpression: 'SET #lastUsedAt = :now',
        ConditionExpression: '#tokenHash = :hash',
        ExpressionAttributeNames: { '#lastUsedAt': 'lastUsedAt', '#tokenHash': 'tokenHash' },
        ExpressionAttributeValues: { ':now': timestamp, ':hash': lookup.tokenHash },
      },
    },
  ]).catch((error: unknown) => log('warn', 'could not record token use', { error: (error as Error).name }));
}
