import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { appTag } from '#domain/app-tag';
import type { ClientType, OAuthApp } from '#domain/apps';
import {
  conditionalWrite,
  db,
  getItems,
  itemOf,
  now,
  type TransactItem,
  tableName,
  transactWithRetry,
} from './client.ts';
import { nextId } from './counters.ts';
import { appKey, appOwnerIndexKey, appStateKey, type Key } from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, TABLE, typed } from './table.ts';

export interface StoredApp extends OAuthApp {
  readonly secretHash: string;
}

export const toApp = (item: Record<string, unknown>): StoredApp => ({
  id: Number(item.id),
  clientId: String(item.clientId),
  name: String(item.name),
  url: String(item.url),
  callbackUrl: String(item.callbackUrl),
  ownerLogin: String(item.ownerLogin),
  suspended: Boolean(item.suspended),
  expireUserTokens: item.expireUserTokens === true,
  deviceFlowEnabled: item.deviceFlowEnabled === true,
  secretHash: String(item.secretHash),
  createdAt: String(item.createdAt),
  updatedAt: String(item.updatedAt),
  clientType: (item.clientType as ClientType | undefined) ?? 'registered',
  redirectUris: (item.redirectUris as string[] | undefined) ?? [],
  // `expiresAt` is the table's TTL attribute: DynamoDB deletes a lapsed dynamic client's item lazily.
  clientExpiresAt: typeof item.expiresAt === 'number' ? item.expiresAt : null,
  documentExpiresAt: typeof item.documentExpiresAt === 'number' ? item.documentExpiresAt : null,
});

/** An application as anything but its own authentication sees it: without the secret's hash. */
export function withoutSecret(app: StoredApp): OAuthApp {
  const { secretHash: _, ...rest } = app;
  return rest;
}

export interface NewApp {
  readonly ownerLogin: string;
  readonly name: string;
  readonly url: string;
  readonly callbackUrl: string;
  /** "Expire user authorization tokens"; off unless asked for. */
  readonly expireUserTokens?: boolean;
}

/**
 * Stores a new application under credentials made by the caller (only the secret's hash);
 * undefined when an application already has that client id (the write's condition).
 */
export async function createApp(
  input: NewApp & { readonly clientId: string; readonly secretHash: string },
): Promise<OAuthApp | undefined> {
  const { clientId } = input;
  const id = await nextId('app');
  const timestamp = now();
  const item = {
    id,
    clientId,
    name: input.name,
    url: input.url,
    callbackUrl: input.callbackUrl,
    ownerLogin: input.ownerLogin,
    suspended: false,
    expireUserTokens: input.expireUserTokens ?? false,
    deviceFlowEnabled: false,
    secretHash: input.secretHash,
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  const written = await conditionalWrite(
    db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...appKey(clientId),
                ...appOwnerIndexKey(input.ownerLogin, clientId),
                ...typed('OAuthApp'),
                ...item,
              },
              // A minted id (80 random bits) never collides; a given one may be taken already.
              ConditionExpression: ITEM_ABSENT,
            },
          },
          stateUpdate(clientId, false, timestamp),
        ],
      }),
    ),
  );
  return written === false ? undefined : withoutSecret(toApp(item));
}

export async function getApp(clientId: string): Promise<StoredApp | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: appKey(clientId), ConsistentRead: true }),
  );
  return Item ? toApp(Item) : undefined;
}

/**
 * An application and one item it acts on (a token's lookup, a refresh token) in one strongly
 * consistent BatchGetItem: what the application-side token endpoints authenticate and act on.
 */
export async function getAppWith<T>(
  clientId: string,
  key: Key,
  read: (item: Record<string, unknown>) => T,
): Promise<{ app?: StoredApp; item?: T }> {
  const appAt = appKey(clientId);
  const items = await getItems([appAt, key], true);
  const app = itemOf(items, appAt);
  const item = itemOf(items, key);
  return { ...(app ? { app: toApp(app) } : {}), ...(item ? { item: read(item) } : {}) };
}

/**
 * The application's line in the state item of its tag (`keys.ts` `appStateKey`), written in the
 * same transaction as the application item so that the two always agree: `clientIds` lists the
 * applications whose state the item holds, `suspendedClientIds` those of them suspended. String
 * set ADD and DELETE touch only this application's entry, so applications sharing a tag never
 * overwrite each other's. An application absent from `clientIds` (made before the item existed)
 * is read from its own item instead.
 */
export function stateUpdate(clientId: string, suspended: boolean, timestamp: string): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: appStateKey(appTag(clientId)),
      UpdateExpression: `SET #type = :type, updatedAt = :now, createdAt = if_not_exists(createdAt, :now) ${
        suspended
          ? 'ADD clientIds :ids, suspendedClientIds :ids'
          : 'ADD clientIds :ids DELETE suspendedClientIds :ids'
      }`,
      ExpressionAttributeNames: { '#type': TABLE.typeAttribute },
      ExpressionAttributeValues: { ':type': 'AppState', ':now': timestamp, ':ids': new Set([clientId]) },
    },
  };
}

/** The suspension state a token-authenticated request reads with the token (see `stateUpdate`). */
export interface AppStateItem {
  /** Whether `clientId` is suspended; undefined when this item does not hold its state. */
  suspended(clientId: string): boolean | undefined;
}

export const toAppState = (item: Record<string, unknown> | undefined): AppStateItem => {
  const known = (item?.clientIds as ReadonlySet<string> | undefined) ?? new Set<string>();
  const suspended = (item?.suspendedClientIds as ReadonlySet<string> | undefined) ?? new Set<string>();
  return { suspended: (clientId) => (known.has(clientId) ? suspended.has(clientId) : undefined) };
};

/**
 * Suspends or reinstates an application, and its line in its tag's state item in the same
 * transaction; `undefined` when there is no such application.
 */
export async function setSuspended(clientId: string, suspended: boolean): Promise<OAuthApp | undefined> {
  const timestamp = now();
  const outcome = await transactWithRetry(
    [
      {
        Update: {
          TableName: tableName(),
          Key: appKey(clientId),
          UpdateExpression: 'SET suspended = :suspended, updatedAt = :now',
          ConditionExpression: ITEM_EXISTS,
          ExpressionAttributeValues: { ':suspended': suspended, ':now': timestamp },
        },
      },
      stateUpdate(clientId, suspended, timestamp),
    ],
    'set suspended',
  );
  if (outcome !== 'ok') return undefined;
  const app = await getApp(clientId);
  return app && withoutSecret(app);
}

/** An application's on/off settings, each off by default. */
export type AppSwitch = 'expireUserTokens' | 'deviceFlowEnabled';

/**
 * Turns one of an application's settings on or off; `undefined` when there is no such
 * application. Only tokens and codes issued afterwards follow the new setting.
 */
export async function setAppSwitch(
  clientId: string,
  setting: AppSwitch,
  on: boolean,
): Promise<OAuthApp | undefined> {
  const written = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: appKey(clientId),
        UpdateExpression: 'SET #setting = :on, updatedAt = :now',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeNames: { '#setting': setting },
        ExpressionAttributeValues: { ':on': on, ':now': now() },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  if (written === false || !written.Attributes) return undefined;
  return withoutSecret(toApp(written.Attributes));
}

/** Several applications in one round trip (BatchGetItem), by client_id; unknown ids are absent. */
export async function getApps(clientIds: Iterable<string>): Promise<Map<string, StoredApp>> {
  const unique = [...new Set(clientIds)].filter((id) => id !== '');
  const found = new Map<string, StoredApp>();
  for (let i = 0; i < unique.length; i += 100) {
    for (const item of (await getItems(unique.slice(i, i + 100).map(appKey), false)).values()) {
      found.set(String(item.clientId), toApp(item));
    }
  }
  return found;
}
