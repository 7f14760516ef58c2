import { GetCommand, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Authorization } from '#domain/authorizations';
import { getAppWith, type StoredApp } from './apps.ts';
import { deleteToken, putToken, replaceTokenHash } from './authorization-items.ts';
import { toAuthorization } from './authorization-state.ts';
import { db, now, RETRY, retryOnConflict, type TransactItem, tableName, transact } from './client.ts';
import { authorizationKey, refreshTokenKey } from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, typed } from './table.ts';
import { patchEntry } from './token-ring.ts';

/**
 * Refresh tokens of expiring user tokens. Only the token's SHA-256 is stored (in the key). A
 * refresh token belongs to one authorization (its family: the authorization keeps its id through
 * every refresh, as through a reset); the authorization item holds `refreshHash`, the hash of the
 * family's one current refresh token. A refresh is one transaction: the presented refresh token is
 * marked used (`attribute_not_exists(usedAt)`), its successor is put, and the authorization moves
 * to a new access token and the new refresh hash (conditional on the old ones), so of concurrent
 * refreshes with one token exactly one commits.
 */
export interface StoredRefreshToken {
  readonly tokenHash: string;
  readonly login: string;
  readonly clientId: string;
  readonly authorizationId: number;
  /** Epoch seconds; also the TTL attribute (DynamoDB deletes lazily, so readers check it). */
  readonly expiresAt: number;
  /** Set by the refresh that spent it; presenting it again is a reuse. */
  readonly usedAt: string | null;
  /** The family began with a public client's grant (the device flow): refreshed with client_id alone. */
  readonly publicClient: boolean;
  /** The protected resource of its family's tokens (RFC 8707); null: the REST API. */
  readonly resource: string | null;
}

/** A refresh token about to be issued: its hash, expiry (epoch seconds) and family's client kind. */
export interface NewRefreshToken {
  readonly tokenHash: string;
  readonly expiresAt: number;
  readonly publicClient: boolean;
}

export const toRefreshToken = (item: Record<string, unknown>): StoredRefreshToken => ({
  tokenHash: String(item.tokenHash),
  login: String(item.login),
  clientId: String(item.clientId),
  authorizationId: Number(item.authorizationId),
  expiresAt: Number(item.expiresAt),
  usedAt: (item.usedAt as string | undefined) ?? null,
  publicClient: item.publicClient === true,
  resource: typeof item.resource === 'string' ? item.resource : null,
});

/** The refresh token item, put in the transaction that creates or refreshes its authorization. */
export function putRefreshTokenRequest(
  refresh: NewRefreshToken,
  owner: Pick<Authorization, 'login' | 'clientId' | 'id' | 'resource'>,
  timestamp: string,
): PutCommandInput {
  return {
    TableName: tableName(),
    Item: {
      ...refreshTokenKey(refresh.tokenHash),
      ...typed('RefreshToken'),
      tokenHash: refresh.tokenHash,
      login: owner.login,
      clientId: owner.clientId,
      authorizationId: owner.id,
      expiresAt: refresh.expiresAt,
      ...(refresh.publicClient ? { publicClient: true } : {}),
      ...(owner.resource ? { resource: owner.resource } : {}),
      createdAt: timestamp,
      updatedAt: timestamp,
    },
    ConditionExpression: ITEM_ABSENT,
  };
}

export const putRefreshToken = (
  refresh: NewRefreshToken,
  owner: Pick<Authorization, 'login' | 'clientId' | 'id' | 'resource'>,
  timestamp: string,
): TransactItem => ({ Put: putRefreshTokenRequest(refresh, owner, timestamp) });

/** Spends a refresh token: only while it was never spent. */
export function spendRefreshToken(tokenHash: string, timestamp: string): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: refreshTokenKey(tokenHash),
      UpdateExpression: 'SET #usedAt = :now, #updatedAt = :now',
      ConditionExpression: `${ITEM_EXISTS} AND attribute_not_exists(#usedAt)`,
      ExpressionAttributeNames: { '#usedAt': 'usedAt', '#updatedAt': 'updatedAt' },
      ExpressionAttributeValues: { ':now': timestamp },
    },
  };
}

export async function getRefreshToken(tokenHash: string): Promise<StoredRefreshToken | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: refreshTokenKey(tokenHash), ConsistentRead: true }),
  );
  return Item ? toRefreshToken(Item) : undefined;
}

/**
 * An application and a refresh token in one strongly consistent round trip: what a refresh and
 * a revocation authenticate and act on.
 */
export async function getAppAndRefreshToken(
  clientId: string,
  tokenHash: string,
): Promise<{ app?: StoredApp; refresh?: StoredRefreshToken }> {
  const { app, item } = await getAppWith(clientId, refreshTokenKey(tokenHash), toRefreshToken);
  return { ...(app ? { app } : {}), ...(item ? { refresh: item } : {}) };
}

/** The new access token and refresh token a refresh moves the authorization to. */
export interface Rotation {
  readonly tokenHash: string;
  readonly tokenLastEight: string;
  /** ISO 8601. */
  readonly expiresAt: string;
  readonly refresh: NewRefreshToken;
}

export type RotateResult =
  | { readonly kind: 'rotated'; readonly authorization: Authorization }
  /** The refresh token had been spent (perhaps a moment ago by a concurrent refresh). */
  | { readonly kind: 'reused' }
  /** Its authorization was revoked, or it is not the family's current refresh token. */
  | { readonly kind: 'gone' };

/**
 * Spends `presented` and moves its authorization to the access token and refresh token of
 * `next`, in one transaction; the old access token fails on the very next request. Retries on a
 * concurrent change (a reset, a use being recorded) from a fresh read.
 */
export async function rotateRefreshToken(
  presented: StoredRefreshToken,
  next: Rotation,
): Promise<RotateResult> {
  return retryOnConflict('rotateRefreshToken', async (attempt) => {
    const refresh = attempt === 0 ? presented : await getRefreshToken(presented.tokenHash);
    if (!refresh) return { kind: 'gone' } as const;
    if (refresh.usedAt !== null) return { kind: 'reused' } as const;
    const { Item } = await db().send(
      new GetCommand({
        TableName: tableName(),
        Key: authorizationKey(refresh.login, refresh.authorizationId),
        ConsistentRead: true,
      }),
    );
    if (!Item) return { kind: 'gone' } as const;
    // Not the family's current refresh token: most likely a concurrent refresh spent it between
    // the two reads, which the fresh read of the refresh token on the next attempt shows.
    if (Item.refreshHash !== refresh.tokenHash) return attempt === 0 ? RETRY : ({ kind: 'gone' } as const);
    const current = toAuthorization(Item);
    const timestamp = now();
    const authorization: Authorization = {
      ...current,
      tokenHash: next.tokenHash,
      tokenLastEight: next.tokenLastEight,
      expiresAt: next.expiresAt,
      updatedAt: timestamp,
    };
    const outcome = await transact([
      spendRefreshToken(refresh.tokenHash, timestamp),
      putRefreshToken(next.refresh, current, timestamp),
      // Only while the authorization still has the access token and refresh token it replaces.
      replaceTokenHash(
        current,
        {
          tokenHash: next.tokenHash,
          tokenLastEight: next.tokenLastEight,
          tokenExpiresAt: next.expiresAt,
          refreshHash: next.refresh.tokenHash,
        },
        timestamp,
        { attribute: 'refreshHash', value: refresh.tokenHash },
      ),
      putToken(authorization, 'create'),
      deleteToken(current.tokenHash),
      // The ring entry names the token hash the limit revokes by (see token-ring.ts).
      ...(typeof Item.ringEntry === 'string'
        ? [
            patchEntry(
              current.login,
              current.clientId,
              Item.ringEntry,
              { hash: next.tokenHash },
              current.tokenHash,
            ),
          ]
        : []),
    ]);
    if (outcome === 'ok') return { kind: 'rotated', authorization } as const;
    if (outcome !== 'conflict' && outcome.failedIndex === 0) return { kind: 'reused' } as const;
    return RETRY; // a concurrent change to the authorization or its lookup: read again
  });
}
