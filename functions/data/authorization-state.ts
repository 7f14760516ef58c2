import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Authorization, GrantRecord } from '#domain/authorizations';
import type { Scope } from '#domain/scopes';
import { db, queryAll, tableName } from './client.ts';
import { AUTH_ITEMS_PREFIX, authorizationKey, grantGenerationKey, userPartition } from './keys.ts';
import { TABLE, typeOf } from './table.ts';
import { entryAttributes, liveTokensOf, RING_VERSION } from './token-ring.ts';

/** Reading a user's authorizations, grants and pointers, and mapping items to domain values. */

/** A grant item: the grant's identity, the count of the application's live tokens for the user, and its token ring. */
export interface GrantItem extends GrantRecord {
  readonly tokens: number;
  /** The ring's version (raised by every registration) and entry names, live and pending. */
  readonly ringVersion: number;
  readonly ringEntries: readonly string[];
}

/** The pointer items an authorization owns, by sort key (deleted with it). */
export interface OwnedPointers {
  readonly note?: string;
  readonly fingerprint?: string;
}

/** Everything authorization-related of one user, read in one Query. */
export interface UserAuthState {
  readonly authorizations: Authorization[];
  readonly grants: Map<string, GrantItem>;
  /** Pointer sort key → authorization id. */
  readonly pointers: Map<string, number>;
  /** Authorization id → the pointer items it owns. */
  readonly owned: Map<number, OwnedPointers>;
  /** client_id → the grant's revocation generation (absent: never revoked, generation 0). */
  readonly generations: Map<string, number>;
  /** Authorization id → the name of its entry in its grant's token ring (application tokens). */
  readonly ringEntries: Map<number, string>;
}

export const ownedPointers = (item: Record<string, unknown>): OwnedPointers =>
  (item.pointers as OwnedPointers | undefined) ?? {};

/** `id`: where the item keeps it elsewhere (a token lookup's `authorizationId`). */
export const toAuthorization = (item: Record<string, unknown>, id: unknown = item.id): Authorization => ({
  id: Number(id),
  login: String(item.login),
  clientId: String(item.clientId ?? ''),
  scopes: (item.scopes as Scope[] | undefined) ?? [],
  note: (item.note as string | null | undefined) ?? null,
  noteUrl: (item.noteUrl as string | null | undefined) ?? null,
  fingerprint: (item.fingerprint as string | null | undefined) ?? null,
  tokenHash: String(item.tokenHash),
  tokenLastEight: String(item.tokenLastEight),
  createdAt: String(item.createdAt),
  updatedAt: String(item.updatedAt),
  lastUsedAt: (item.lastUsedAt as string | null | undefined) ?? null,
  // Not `expiresAt`: that name is the table's TTL attribute (see authorization-items.ts).
  expiresAt: (item.tokenExpiresAt as string | null | undefined) ?? null,
  ...(typeof item.resource === 'string' ? { resource: item.resource } : {}),
});

const toGrantItem = (item: Record<string, unknown>): GrantItem => ({
  id: Number(item.id),
  clientId: String(item.clientId),
  tokens: liveTokensOf(item).length,
  createdAt: String(item.createdAt),
  updatedAt: String(item.updatedAt),
  ringVersion: Number(item[RING_VERSION] ?? 0),
  ringEntries: entryAttributes(item),
});

export async function readUserAuthState(login: string): Promise<UserAuthState> {
  const state: UserAuthState = {
    authorizations: [],
    grants: new Map(),
    pointers: new Map(),
    owned: new Map(),
    generations: new Map(),
    ringEntries: new Map(),
  };
  const { items } = await queryAll({
    KeyConditionExpression: `${TABLE.partitionKey} = :pk AND begins_with(${TABLE.sortKey}, :prefix)`,
    ExpressionAttributeValues: { ':pk': userPartition(login), ':prefix': AUTH_ITEMS_PREFIX },
    ConsistentRead: true,
  });
  for (const item of items) {
    const type = typeOf(item);
    if (type === 'Authorization') {
      state.authorizations.push(toAuthorization(item));
      state.owned.set(Number(item.id), ownedPointers(item));
      if (typeof item.ringEntry === 'string') state.ringEntries.set(Number(item.id), item.ringEntry);
    } else if (type === 'Grant') {
      // A grant item without an id is a ring whose tokens are all gone: no grant (see deleteAuthorization).
      if (item.id !== undefined) state.grants.set(String(item.clientId), toGrantItem(item));
    } else if (type === 'GrantGeneration')
      state.generations.set(String(item.clientId), Number(item.generation));
    else state.pointers.set(String(item[TABLE.sortKey]), Number(item.authorizationId));
  }
  state.authorizations.sort((a, b) => a.id - b.id);
  return state;
}

export async function getAuthorization(login: string, id: number): Promise<Authorization | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: authorizationKey(login, id), ConsistentRead: true }),
  );
  return Item ? toAuthorization(Item) : undefined;
}

/** The user's grant generation for an application (0 until its first revocation). */
export async function getGrantGeneration(login: string, clientId: string): Promise<number> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: grantGenerationKey(login, clientId),
      ConsistentRead: true,
    }),
  );
  return Number(Item?.generation ?? 0);
}

/** The name of an authorization's entry in its grant's token ring, or undefined (a personal token). */
export async function getRingEntry(login: string, id: number): Promise<string | undefined> {
  const { Item } = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: authorizationKey(login, id),
      ConsistentRead: true,
      ProjectionExpression: 'ringEntry',
    }),
  );
  return typeof Item?.ringEntry === 'string' ? Item.ringEntry : undefined;
}
