import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Scope } from '#domain/scopes';
import { conditionalWrite, db, now, tableName, transact } from './client.ts';
import { countInWindow } from './counters.ts';
import { deviceCodeKey, deviceEntryKey, userCodeKey } from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, typed } from './table.ts';

/**
 * Device authorizations (RFC 8628). Two items, written in one transaction: the authorization
 * under the SHA-256 of its device code, and a pointer to it under the SHA-256 of its user code
 * (the device page finds it there). Neither code is stored in the clear; both items carry the TTL.
 *
 * A poll is one strongly consistent GetItem; only a `slow_down` writes (the grown interval).
 */
export type DeviceStatus = 'pending' | 'approved' | 'denied';

export interface StoredDevice {
  readonly deviceCodeHash: string;
  readonly clientId: string;
  readonly scopes: readonly Scope[];
  /** Epoch seconds; also the TTL attribute (DynamoDB deletes lazily, so readers check it). */
  readonly expiresAt: number;
  /** The current polling interval, in milliseconds (grows with every `slow_down`). */
  readonly intervalMs: number;
  readonly status: DeviceStatus;
  /** The user who approved it (set with `approved`). */
  readonly login: string | null;
  /** The user's grant generation for the application when they approved (see `data/codes.ts`). */
  readonly grantGeneration: number;
  readonly exchangedAt: string | null;
  readonly authorizationId: number | null;
  /** The protected resource the token will be for (RFC 8707); null: the REST API. */
  readonly resource: string | null;
}

export interface NewDevice {
  readonly deviceCodeHash: string;
  readonly userCodeHash: string;
  readonly clientId: string;
  readonly scopes: readonly Scope[];
  readonly expiresAt: number;
  readonly intervalMs: number;
  readonly resource?: string | null;
}

const toDevice = (item: Record<string, unknown>): StoredDevice => ({
  deviceCodeHash: String(item.deviceCodeHash),
  clientId: String(item.clientId),
  scopes: (item.scopes as Scope[] | undefined) ?? [],
  expiresAt: Number(item.expiresAt),
  intervalMs: Number(item.intervalMs),
  status: (item.status as DeviceStatus | undefined) ?? 'pending',
  login: (item.login as string | undefined) ?? null,
  grantGeneration: Number(item.grantGeneration ?? 0),
  exchangedAt: (item.exchangedAt as string | undefined) ?? null,
  authorizationId: item.authorizationId === undefined ? null : Number(item.authorizationId),
  resource: typeof item.resource === 'string' ? item.resource : null,
});

/** Stores a new device authorization; false when the user code is taken (make another one). */
export async function putDevice(device: NewDevice): Promise<boolean> {
  const timestamp = now();
  const outcome = await transact([
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...deviceCodeKey(device.deviceCodeHash),
          ...typed('DeviceAuthorization'),
          deviceCodeHash: device.deviceCodeHash,
          clientId: device.clientId,
          scopes: device.scopes,
          expiresAt: device.expiresAt,
          intervalMs: device.intervalMs,
          ...(device.resource ? { resource: device.resource } : {}),
          status: 'pending',
          createdAt: timestamp,
          updatedAt: timestamp,
        },
        ConditionExpression: ITEM_ABSENT,
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...userCodeKey(device.userCodeHash),
          ...typed('DeviceUserCode'),
          deviceCodeHash: device.deviceCodeHash,
          expiresAt: device.expiresAt,
          createdAt: timestamp,
          updatedAt: timestamp,
        },
        ConditionExpression: ITEM_ABSENT,
      },
    },
  ]);
  if (outcome === 'ok') return true;
  if (outcome === 'conflict') return false;
  if (outcome.failedIndex === 1) return false;
  throw new Error('putDevice: a device code collided');
}

/** One poll: the device authorization by its code's hash, strongly consistent (undefined: unknown, or gone by TTL). */
export async function getDevice(deviceCodeHash: string): Promise<StoredDevice | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: deviceCodeKey(deviceCodeHash), ConsistentRead: true }),
  );
  return Item ? toDevice(Item) : undefined;
}

/** `slow_down`: the interval grows by `stepMs`. Returns the new interval. */
export async function slowDown(device: StoredDevice, stepMs: number): Promise<number> {
  const intervalMs = device.intervalMs + stepMs;
  const written = await conditionally({
    TableName: tableName(),
    Key: deviceCodeKey(device.deviceCodeHash),
    UpdateExpression: 'SET #interval = :interval, #updatedAt = :now',
    // Concurrent early polls grow the interval once, not once each.
    ConditionExpression: `${ITEM_EXISTS} AND #interval = :old`,
    ExpressionAttributeNames: { '#interval': 'intervalMs', '#updatedAt': 'updatedAt' },
    ExpressionAttributeValues: { ':interval': intervalMs, ':old': device.intervalMs, ':now': now() },
  });
  return written === false ? Math.max(intervalMs, device.intervalMs) : intervalMs;
}

async function conditionally(input: UpdateCommandInput): Promise<Record<string, unknown> | false> {
  const written = await conditionalWrite(db().send(new UpdateCommand(input)));
  return written === false ? false : (written.Attributes ?? {});
}

/** The device authorization a user code names, or undefined (unknown, or deleted by TTL). */
export async function deviceByUserCode(userCodeHash: string): Promise<StoredDevice | undefined> {
  const pointer = await db().send(
    new GetCommand({ TableName: tableName(), Key: userCodeKey(userCodeHash), ConsistentRead: true }),
  );
  const deviceCodeHash = pointer.Item?.deviceCodeHash;
  if (typeof deviceCodeHash !== 'string') return undefined;
  return getDevice(deviceCodeHash);
}

/** The user's decision; false when the authorization is no longer pending (or has expired). */
export async function decideDevice(
  deviceCodeHash: string,
  decision:
    | { readonly status: 'approved'; readonly login: string; readonly grantGeneration: number }
    | { readonly status: 'denied'; readonly login: string },
  nowMs: number,
): Promise<boolean> {
  const written = await conditionally({
    TableName: tableName(),
    Key: deviceCodeKey(deviceCodeHash),
    UpdateExpression: 'SET #status = :status, #login = :login, #generation = :generation, #updatedAt = :now',
    ConditionExpression: `${ITEM_EXISTS} AND #status = :pending AND #expiresAt > :nowS`,
    ExpressionAttributeNames: {
      '#status': 'status',
      '#login': 'login',
      '#generation': 'grantGeneration',
      '#expiresAt': 'expiresAt',
      '#updatedAt': 'updatedAt',
    },
    ExpressionAttributeValues: {
      ':status': decision.status,
      ':login': decision.login,
      ':generation': decision.status === 'approved' ? decision.grantGeneration : 0,
      ':pending': 'pending',
      ':nowS': Math.floor(nowMs / 1000),
      ':now': now(),
    },
  });
  return written !== false;
}

/** Claims an approved, unexchanged authorization for the token about to be minted (exactly once). */
export async function claimDevice(deviceCodeHash: string, tokenHash: string): Promise<boolean> {
  const written = await conditionally({
    TableName: tableName(),
    Key: deviceCodeKey(deviceCodeHash),
    UpdateExpression: 'SET #exchangedAt = :now, #tokenHash = :tokenHash, #updatedAt = :now',
    ConditionExpression: `${ITEM_EXISTS} AND #status = :approved AND attribute_not_exists(#exchangedAt)`,
    ExpressionAttributeNames: {
      '#exchangedAt': 'exchangedAt',
      '#tokenHash': 'tokenHash',
      '#status': 'status',
      '#updatedAt': 'updatedAt',
    },
    ExpressionAttributeValues: { ':now': now(), ':tokenHash': tokenHash, ':approved': 'approved' },
  });
  return written !== false;
}

/** Gives a claim back when minting failed (nothing was issued), so the client's next poll retries. */
export async function releaseDevice(deviceCodeHash: string, tokenHash: string): Promise<void> {
  await conditionally({
    TableName: tableName(),
    Key: deviceCodeKey(deviceCodeHash),
    UpdateExpression: 'REMOVE #exchangedAt, #tokenHash SET #updatedAt = :now',
    ConditionExpression: '#tokenHash = :tokenHash AND attribute_not_exists(#authorizationId)',
    ExpressionAttributeNames: {
      '#exchangedAt': 'exchangedAt',
      '#tokenHash': 'tokenHash',
      '#authorizationId': 'authorizationId',
      '#updatedAt': 'updatedAt',
    },
    ExpressionAttributeValues: { ':tokenHash': tokenHash, ':now': now() },
  });
}

/** Records the authorization the exchange created (for the record; nothing revokes through it). */
export async function recordDeviceExchange(deviceCodeHash: string, authorizationId: number): Promise<void> {
  await conditionally({
    TableName: tableName(),
    Key: deviceCodeKey(deviceCodeHash),
    UpdateExpression: 'SET #authorizationId = :id, #updatedAt = :now',
    ConditionExpression: ITEM_EXISTS,
    ExpressionAttributeNames: { '#authorizationId': 'authorizationId', '#updatedAt': 'updatedAt' },
    ExpressionAttributeValues: { ':id': authorizationId, ':now': now() },
  });
}

/**
 * Reserves one user-code entry in the user's current window: a conditional ADD below `max`, so
 * concurrent entries cannot exceed the limit. The window's count with this entry, or false when
 * the window is full (locked).
 */
export async function reserveEntry(
  login: string,
  window: number,
  max: number,
  expiresAt: number,
): Promise<number | false> {
  return countInWindow(deviceEntryKey(login, window), 'DeviceEntryWindow', max, expiresAt);
}

/** Gives a reserved entry back: the code was right, so it was no wrong entry. */
export async function releaseEntry(login: string, window: number): Promise<void> {
  await conditionally({
    TableName: tableName(),
    Key: deviceEntryKey(login, window),
    UpdateExpression: 'ADD #count :minusOne',
    ConditionExpression: '#count > :zero',
    ExpressionAttributeNames: { '#count': 'count' },
    ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
  });
}
