import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ClientMetadata } from '#domain/client-metadata';
import type { RegisteredClientMetadata } from '#domain/client-registration';
import { type StoredApp, stateUpdate, toApp } from './apps.ts';
import { conditionalWrite, db, now, tableName } from './client.ts';
import { countInWindow } from './counters.ts';
import {
  appKey,
  clientDocumentFetchWindowKey,
  clientRegistrationWindowKey,
  serviceSettingKey,
} from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, typed } from './table.ts';

/**
 * Public clients kept as application items (`APP#<client_id>`), so that tokens, grants, the
 * token limit and suspension work for them exactly as for registered applications: clients named
 * by a metadata document URL (the item is that document's cache) and clients registered
 * dynamically (the item expires with them). Neither has a secret (`secretHash` empty matches none),
 * an owner or a numeric id (0).
 */

const publicFields = (timestamp: string) => ({
  id: 0,
  ownerLogin: '',
  secretHash: '',
  // Public clients' tokens expire and are refreshed (RFC 9700 §2.2.2 for tokens of public clients).
  expireUserTokens: true,
  deviceFlowEnabled: false,
  createdAt: timestamp,
  updatedAt: timestamp,
});

/**
 * Stores a metadata document client as just fetched: the first time with its line in its tag's
 * state item (so its tokens' suspension check needs no second read), afterwards only the document's
 * fields and freshness (a suspension stays). Returns the client as stored.
 */
export async function saveDocumentClient(
  metadata: ClientMetadata,
  documentExpiresAt: number,
): Promise<StoredApp> {
  const timestamp = now();
  const fields = {
    clientId: metadata.clientId,
    name: metadata.name,
    url: metadata.clientUri ?? metadata.clientId,
    callbackUrl: metadata.redirectUris[0] ?? '',
    redirectUris: metadata.redirectUris,
    clientType: 'metadata-document',
    documentExpiresAt,
  };
  const updated = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: appKey(metadata.clientId),
        UpdateExpression:
          'SET #name = :name, #url = :url, callbackUrl = :callback, redirectUris = :uris, documentExpiresAt = :fresh, updatedAt = :now',
        ConditionExpression: `${ITEM_EXISTS} AND clientType = :type`,
        ExpressionAttributeNames: { '#name': 'name', '#url': 'url' },
        ExpressionAttributeValues: {
          ':name': fields.name,
          ':url': fields.url,
          ':callback': fields.callbackUrl,
          ':uris': fields.redirectUris,
          ':fresh': documentExpiresAt,
          ':now': timestamp,
          ':type': fields.clientType,
        },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  if (updated !== false && updated.Attributes) return toApp(updated.Attributes);
  const item = { ...publicFields(timestamp), ...fields, suspended: false };
  const created = await conditionalWrite(
    db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: { ...appKey(metadata.clientId), ...typed('OAuthApp'), ...item },
              ConditionExpression: ITEM_ABSENT,
            },
          },
          stateUpdate(metadata.clientId, false, timestamp),
        ],
      }),
    ),
  );
  if (created !== false) return toApp(item);
  // Stored meanwhile by a concurrent request (or a registered application holds this id): as it is now.
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: appKey(metadata.clientId), ConsistentRead: true }),
  );
  if (!Item) throw new Error('saveDocumentClient: the client item vanished');
  return toApp(Item);
}

/** Stores a dynamically registered client under a new client id; false when the id is taken. */
export async function saveDynamicClient(
  clientId: string,
  metadata: RegisteredClientMetadata,
  expiresAt: number,
): Promise<StoredApp | false> {
  const timestamp = now();
  const item = {
    ...publicFields(timestamp),
    clientId,
    name: metadata.clientName,
    url: metadata.clientUri ?? '',
    callbackUrl: metadata.redirectUris[0] ?? '',
    redirectUris: metadata.redirectUris,
    clientType: 'dynamic',
    suspended: false,
    // The TTL attribute: the item goes some time after the client lapses (readers check it first).
    expiresAt,
  };
  const written = await conditionalWrite(
    db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: { ...appKey(clientId), ...typed('OAuthApp'), ...item },
              ConditionExpression: ITEM_ABSENT,
            },
          },
          stateUpdate(clientId, false, timestamp),
        ],
      }),
    ),
  );
  return written === false ? false : toApp(item);
}

/** Counts a registration from `address` in its window; false when the window is full. */
export async function countRegistration(
  address: string,
  window: number,
  max: number,
  expiresAt: number,
): Promise<boolean> {
  return (
    (await countInWindow(
      clientRegistrationWindowKey(address, window),
      'ClientRegistrationWindow',
      max,
      expiresAt,
    )) !== false
  );
}

/** Counts a document fetch for `address` in its window; false when the window is full. */
export async function countDocumentFetch(
  address: string,
  window: number,
  max: number,
  expiresAt: number,
): Promise<boolean> {
  return (
    (await countInWindow(
      clientDocumentFetchWindowKey(address, window),
      'ClientDocumentFetchWindow',
      max,
      expiresAt,
    )) !== false
  );
}

/** Service-wide on/off settings, each off until an administrator turns it on. */
export type ServiceSwitch = 'dynamic-client-registration';

export async function getServiceSwitch(name: ServiceSwitch): Promise<boolean> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: serviceSettingKey(name) }));
  return Item?.on === true;
}

export async function setServiceSwitch(name: ServiceSwitch, on: boolean): Promise<void> {
  const timestamp = now();
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...serviceSettingKey(name),
        ...typed('ServiceSetting'),
        on,
        createdAt: timestamp,
        updatedAt: timestamp,
      },
    }),
  );
}
