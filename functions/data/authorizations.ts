import { createHash } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Authorization, type Grant, grantScopes, oldestOverLimit } from '#domain/authorizations';
import type { Scope } from '#domain/scopes';
import { log } from '#shared/log';
import { type StoredApp, toApp } from './apps.ts';
import {
  backoff,
  db,
  getItems,
  itemOf,
  MAX_ATTEMPTS,
  now,
  queryAll,
  type TransactItem,
  tableName,
  transact,
} from './client.ts';
import { nextId } from './counters.ts';
import {
  AUTH_ITEMS_PREFIX,
  appAuthorizationIndexKey,
  appKey,
  authorizationKey,
  fingerprintPointerKey,
  grantGenerationKey,
  grantKey,
  notePointerKey,
  tokenKey,
  userPartition,
} from './keys.ts';
import { TABLE } from './table.ts';

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

interface GrantItem {
  readonly id: number;
  readonly clientId: string;
  readonly tokens: number;
  readonly createdAt: string;
  readonly updatedAt: string;
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
}

/** The pointer items an authorization owns, by sort key (deleted with it). */
interface OwnedPointers {
  readonly note?: string;
  readonly fingerprint?: string;
}

const noteHash = (note: string): string => createHash('sha256').update(note).digest('hex');

const ownedPointers = (item: Record<string, unknown>): OwnedPointers =>
  (item.pointers as OwnedPointers | undefined) ?? {};

const toAuthorization = (item: Record<string, unknown>): Authorization => ({
  id: Number(item.id),
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
});

export async function readUserAuthState(login: string): Promise<UserAuthState> {
  const state: UserAuthState = {
    authorizations: [],
    grants: new Map(),
    pointers: new Map(),
    owned: new Map(),
    generations: new Map(),
  };
  const { items } = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
    ExpressionAttributeValues: { ':pk': userPartition(login), ':prefix': AUTH_ITEMS_PREFIX },
    ConsistentRead: true,
  });
  for (const item of items) {
    if (item._type === 'Authorization') {
      state.authorizations.push(toAuthorization(item));
      state.owned.set(Number(item.id), ownedPointers(item));
    } else if (item._type === 'Grant') state.grants.set(String(item.clientId), item as unknown as GrantItem);
    else if (item._type === 'GrantGeneration')
      state.generations.set(String(item.clientId), Number(item.generation));
    else state.pointers.set(String(item.SK), Number(item.authorizationId));
  }
  state.authorizations.sort((a, b) => a.id - b.id);
  return state;
}

export function grantsOf(state: UserAuthState, login: string): Grant[] {
  const grants: Grant[] = [];
  for (const [clientId, item] of state.grants) {
    // A grant exists while its application holds tokens for the user.
    if (!state.authorizations.some((a) => a.clientId === clientId)) continue;
    grants.push({
      id: Number(item.id),
      login,
      clientId,
      scopes: grantScopes(state.authorizations, clientId),
      createdAt: item.createdAt,
      updatedAt: item.updatedAt,
      lastUsedAt: lastUse(state.authorizations.filter((a) => a.clientId === clientId)),
    });
  }
  return grants.sort((a, b) => a.id - b.id);
}

const lastUse = (authorizations: readonly Authorization[]): string | null =>
  authorizations.reduce<string | null>(
    (latest, a) => (a.lastUsedAt && (!latest || a.lastUsedAt > latest) ? a.lastUsedAt : latest),
    null,
  );

export async function getAuthorization(login: string, id: number): Promise<Authorization | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: authorizationKey(login, id), ConsistentRead: true }),
  );
  return Item ? toAuthorization(Item) : undefined;
}

export const toTokenLookup = (item: Record<string, unknown>, tokenHash: string): TokenLookup => ({
  login: String(item.login),
  authorizationId: Number(item.authorizationId),
  clientId: String(item.clientId ?? ''),
  scopes: (item.scopes as Scope[] | undefined) ?? [],
  tokenHash,
  lastUsedAt: (item.lastUsedAt as string | null | undefined) ?? null,
  authorization: toAuthorization({ ...item, id: item.authorizationId }),
});

export async function lookupToken(tokenHash: string): Promise<TokenLookup | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: tokenKey(tokenHash), ConsistentRead: true }),
  );
  return Item ? toTokenLookup(Item, tokenHash) : undefined;
}

/**
 * An application and a token's lookup in one strongly consistent round trip: what the
 * application-side token endpoints authenticate and act on.
 */
export async function getAppAndToken(
  clientId: string,
  tokenHash: string,
): Promise<{ app?: StoredApp; token?: TokenLookup }> {
  const appAt = appKey(clientId);
  const tokenAt = tokenKey(tokenHash);
  const items = await getItems([appAt, tokenAt], true);
  const app = itemOf(items, appAt);
  const token = itemOf(items, tokenAt);
  return {
    ...(app ? { app: toApp(app) } : {}),
    ...(token ? { token: toTokenLookup(token, tokenHash) } : {}),
  };
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
        TableName: table(),
        Key: tokenKey(lookup.tokenHash),
        UpdateExpression: 'SET #lastUsedAt = :now',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: { '#lastUsedAt': 'lastUsedAt' },
        ExpressionAttributeValues: { ':now': timestamp },
      },
    },
    {
      Update: {
        TableName: table(),
        Key: authorizationKey(lookup.login, lookup.authorizationId),
        UpdateExpression: 'SET #lastUsedAt = :now',
        ConditionExpression: '#tokenHash = :hash',
        ExpressionAttributeNames: { '#lastUsedAt': 'lastUsedAt', '#tokenHash': 'tokenHash' },
        ExpressionAttributeValues: { ':now': timestamp, ':hash': lookup.tokenHash },
      },
    },
  ]).catch((error: unknown) => log('warn', 'could not record token use', { error: (error as Error).name }));
}

// ---------------------------------------------------------------------------------------------
// Transaction builders: pure functions from domain values to TransactWriteItems entries.

const table = () => tableName();

/**
 * The stored fields of an authorization, named one by one: items are written from this list and
 * never from a spread of whatever object a caller passed (which once stored a fresh plaintext
 * token that rode along on the reset input).
 */
const authorizationFields = (a: Authorization) => ({
  login: a.login,
  clientId: a.clientId,
  scopes: a.scopes,
  note: a.note,
  noteUrl: a.noteUrl,
  fingerprint: a.fingerprint,
  tokenHash: a.tokenHash,
  tokenLastEight: a.tokenLastEight,
  createdAt: a.createdAt,
  updatedAt: a.updatedAt,
  lastUsedAt: a.lastUsedAt,
});

function putAuthorization(a: Authorization, pointers: OwnedPointers): TransactItem {
  return {
    Put: {
      TableName: table(),
      Item: {
        ...authorizationKey(a.login, a.id),
        ...(a.clientId ? appAuthorizationIndexKey(a.clientId, a.login, a.id) : {}),
        _type: 'Authorization',
        id: a.id,
        ...authorizationFields(a),
        pointers,
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}

/**
 * The token lookup item: what a token request needs (login, authorization id, client, scopes) and
 * a copy of the authorization's other fields, always written in the same transaction as the
 * authorization item, so that the application-side endpoints get everything they answer with in
 * the round trip that reads the application.
 */
function putToken(a: Authorization, mode: 'create' | 'replace'): TransactItem {
  return {
    Put: {
      TableName: table(),
      Item: {
        ...tokenKey(a.tokenHash),
        _type: 'TokenLookup',
        authorizationId: a.id,
        ...authorizationFields(a),
      },
      ConditionExpression: mode === 'create' ? 'attribute_not_exists(PK)' : 'attribute_exists(PK)',
    },
  };
}

function putPointer(
  key: { PK: string; SK: string },
  authorizationId: number,
  timestamp: string,
): TransactItem {
  return {
    Put: {
      TableName: table(),
      Item: { ...key, _type: 'Pointer', authorizationId, createdAt: timestamp, updatedAt: timestamp },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}

function deletePointer(key: { PK: string; SK: string }, authorizationId: number): TransactItem {
  return {
    Delete: {
      TableName: table(),
      Key: key,
      ConditionExpression: '#authorizationId = :id',
      ExpressionAttributeNames: { '#authorizationId': 'authorizationId' },
      ExpressionAttributeValues: { ':id': authorizationId },
    },
  };
}

/** Deletes an authorization with its token lookup and the pointers it owns. */
function deleteAuthorizationItems(a: Authorization, pointers: OwnedPointers): TransactItem[] {
  const items: TransactItem[] = [
    {
      Delete: {
        TableName: table(),
        Key: authorizationKey(a.login, a.id),
        ConditionExpression: 'attribute_exists(PK)',
      },
    },
    { Delete: { TableName: table(), Key: tokenKey(a.tokenHash) } },
  ];
  const partition = userPartition(a.login);
  for (const sk of [pointers.note, pointers.fingerprint])
    if (sk) items.push(deletePointer({ PK: partition, SK: sk }, a.id));
  return items;
}

/**
 * Keeps the grant's token count exact: +1/-1 (or delete at zero), each conditioned on the count
 * read, so that a concurrent change to the same grant cancels the transaction and is retried.
 */
function grantChange(
  login: string,
  clientId: string,
  grant: GrantItem | undefined,
  delta: number,
  newGrantId: number | undefined,
  timestamp: string,
): TransactItem | undefined {
  if (!clientId) return undefined;
  const Key = grantKey(login, clientId);
  if (!grant) {
    if (delta <= 0 || newGrantId === undefined) return undefined;
    return {
      Put: {
        TableName: table(),
        Item: {
          ...Key,
          _type: 'Grant',
          id: newGrantId,
          clientId,
          tokens: delta,
          createdAt: timestamp,
          updatedAt: timestamp,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    };
  }
  if (grant.tokens + delta <= 0) {
    return {
      Delete: {
        TableName: table(),
        Key,
        ConditionExpression: '#tokens = :n',
        ExpressionAttributeNames: { '#tokens': 'tokens' },
        ExpressionAttributeValues: { ':n': grant.tokens },
      },
    };
  }
  return {
    Update: {
      TableName: table(),
      Key,
      UpdateExpression: 'SET #tokens = :next, #updatedAt = :now',
      ConditionExpression: '#tokens = :n',
      ExpressionAttributeNames: { '#tokens': 'tokens', '#updatedAt': 'updatedAt' },
      ExpressionAttributeValues: { ':n': grant.tokens, ':next': grant.tokens + delta, ':now': timestamp },
    },
  };
}

/**
 * Holds while the user's grant for the application is still at `generation` (no revocation since
 * it was read): the condition that keeps a token minted during a revocation from surviving it.
 */
function checkGrantGeneration(login: string, clientId: string, generation: number): TransactItem {
  return {
    ConditionCheck: {
      TableName: table(),
      Key: grantGenerationKey(login, clientId),
      ...(generation === 0
        ? { ConditionExpression: 'attribute_not_exists(#generation)' }
        : {
            ConditionExpression: '#generation = :generation',
            ExpressionAttributeValues: { ':generation': generation },
          }),
      ExpressionAttributeNames: { '#generation': 'generation' },
    },
  };
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

/**
 * Raises the user's grant generation for an application: from now on, codes issued before and
 * tokens being minted from a state read before cannot be turned into tokens.
 */
async function raiseGrantGeneration(login: string, clientId: string): Promise<void> {
  const timestamp = now();
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: grantGenerationKey(login, clientId),
      UpdateExpression:
        'ADD #generation :one SET #type = :type, #clientId = :clientId, #createdAt = if_not_exists(#createdAt, :now), #updatedAt = :now',
      ExpressionAttributeNames: {
        '#generation': 'generation',
        '#type': TABLE.typeAttribute,
        '#clientId': 'clientId',
        '#createdAt': 'createdAt',
        '#updatedAt': 'updatedAt',
      },
      ExpressionAttributeValues: {
        ':one': 1,
        ':type': 'GrantGeneration',
        ':clientId': clientId,
        ':now': timestamp,
      },
    }),
  );
}

// ---------------------------------------------------------------------------------------------

/** A new authorization's fields (id and timestamps are assigned here). */
export type NewAuthorization = Omit<Authorization, 'id' | 'createdAt' | 'updatedAt' | 'lastUsedAt'> & {
  /** Make this the authorization get-or-create returns for (app, fingerprint); refused if taken. */
  readonly claimFingerprint: boolean;
  /**
   * Create only while the user's grant for the application is at this generation (a code's
   * generation); `grant-revoked` otherwise. Without it, the generation read with the state counts.
   */
  readonly grantGeneration?: number;
};

export type CreateResult =
  | { readonly kind: 'created'; readonly authorization: Authorization; readonly revoked?: Authorization }
  | { readonly kind: 'note-taken' }
  | { readonly kind: 'fingerprint-taken' }
  | { readonly kind: 'grant-revoked' };

/**
 * Creates an authorization in one transaction with its token lookup, its uniqueness pointers
 * (personal note; app + fingerprint when claimed), its grant's count, and, past the token limit,
 * the revocation of the oldest token of the same user/app/scope set. Retries on concurrent change.
 */
export async function createAuthorization(
  input: NewAuthorization,
  known?: UserAuthState,
): Promise<CreateResult> {
  let state = known ?? (await readUserAuthState(input.login));
  const id = await nextId('authorization');
  let newGrantId: number | undefined;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const timestamp = now();
    const authorization: Authorization = {
      id,
      login: input.login,
      clientId: input.clientId,
      scopes: input.scopes,
      note: input.note,
      noteUrl: input.noteUrl,
      fingerprint: input.fingerprint,
      tokenHash: input.tokenHash,
      tokenLastEight: input.tokenLastEight,
      createdAt: timestamp,
      updatedAt: timestamp,
      lastUsedAt: null,
    };
    const pointers: OwnedPointers = {
      ...(input.clientId === '' && input.note !== null
        ? { note: notePointerKey(input.login, noteHash(input.note)).SK }
        : {}),
      ...(input.claimFingerprint
        ? { fingerprint: fingerprintPointerKey(input.login, input.clientId, input.fingerprint ?? '').SK }
        : {}),
    };
    const generation = state.generations.get(input.clientId) ?? 0;
    if (input.grantGeneration !== undefined && input.grantGeneration !== generation)
      return { kind: 'grant-revoked' };
    const grant = state.grants.get(input.clientId);
    if (input.clientId && !grant && newGrantId === undefined) newGrantId = await nextId('grant');
    const oldest = oldestOverLimit(state.authorizations, input.clientId, input.scopes);

    const items: TransactItem[] = [
      putAuthorization(authorization, pointers),
      putToken(authorization, 'create'),
    ];
    const noteIndex = pointers.note
      ? items.push(putPointer({ PK: userPartition(input.login), SK: pointers.note }, id, timestamp)) - 1
      : -1;
    const fingerprintIndex = pointers.fingerprint
      ? items.push(putPointer({ PK: userPartition(input.login), SK: pointers.fingerprint }, id, timestamp)) -
        1
      : -1;
    if (oldest) items.push(...deleteAuthorizationItems(oldest, state.owned.get(oldest.id) ?? {}));
    const grantItem = grantChange(input.login, input.clientId, grant, oldest ? 0 : 1, newGrantId, timestamp);
    if (grantItem) items.push(grantItem);
    const generationIndex = input.clientId
      ? items.push(checkGrantGeneration(input.login, input.clientId, generation)) - 1
      : -1;

    const outcome = await transact(items);
    if (outcome === 'ok') return { kind: 'created', authorization, ...(oldest ? { revoked: oldest } : {}) };
    if (outcome !== 'conflict' && outcome.failedIndex === noteIndex) return { kind: 'note-taken' };
    if (outcome !== 'conflict' && outcome.failedIndex === fingerprintIndex)
      return { kind: 'fingerprint-taken' };
    if (
      outcome !== 'conflict' &&
      outcome.failedIndex === generationIndex &&
      input.grantGeneration !== undefined
    )
      return { kind: 'grant-revoked' };
    await backoff(attempt);
    state = await readUserAuthState(input.login);
  }
  throw new Error('createAuthorization: too much contention');
}

export type GetOrCreateResult =
  | { readonly kind: 'existing'; readonly authorization: Authorization }
  | { readonly kind: 'created'; readonly authorization: Authorization };

/**
 * Returns the authorization for user + app + fingerprint, creating it only when none exists. The
 * fingerprint pointer's conditional put decides between concurrent identical requests; an
 * authorization made earlier without the pointer (e.g. by POST) is adopted by claiming it.
 */
export async function getOrCreateAuthorization(
  input: Omit<NewAuthorization, 'claimFingerprint'>,
): Promise<GetOrCreateResult> {
  const fingerprint = input.fingerprint ?? '';
  const pointerKey = fingerprintPointerKey(input.login, input.clientId, fingerprint);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const state = await readUserAuthState(input.login);
    const pointed = state.pointers.get(pointerKey.SK);
    const existing =
      state.authorizations.find((a) => a.id === pointed) ??
      state.authorizations.find(
        (a) => a.clientId === input.clientId && (a.fingerprint ?? '') === fingerprint,
      );
    if (existing) {
      if (pointed === existing.id) return { kind: 'existing', authorization: existing };
      // Adopt it: point at it and record that it owns the pointer, atomically.
      const timestamp = now();
      const outcome = await transact([
        pointed === undefined
          ? putPointer(pointerKey, existing.id, timestamp)
          : {
              Put: {
                TableName: table(),
                Item: {
                  ...pointerKey,
                  _type: 'Pointer',
                  authorizationId: existing.id,
                  createdAt: timestamp,
                  updatedAt: timestamp,
                },
                ConditionExpression: '#authorizationId = :old',
                ExpressionAttributeNames: { '#authorizationId': 'authorizationId' },
                ExpressionAttributeValues: { ':old': pointed },
              },
            },
        {
          Update: {
            TableName: table(),
            Key: authorizationKey(existing.login, existing.id),
            UpdateExpression: 'SET #pointers.#fingerprint = :sk',
            ExpressionAttributeNames: { '#pointers': 'pointers', '#fingerprint': 'fingerprint' },
            ConditionExpression: 'attribute_exists(PK)',
            ExpressionAttributeValues: { ':sk': pointerKey.SK },
          },
        },
      ]);
      if (outcome === 'ok') return { kind: 'existing', authorization: existing };
      await backoff(attempt);
      continue;
    }
    const created = await createAuthorization({ ...input, claimFingerprint: true }, state);
    if (created.kind === 'created') return { kind: 'created', authorization: created.authorization };
    if (created.kind === 'note-taken' || created.kind === 'grant-revoked')
      throw new Error(`unreachable: ${created.kind} for get-or-create`);
  }
  throw new Error('getOrCreateAuthorization: too much contention');
}

/** Deletes an authorization (its token stops working at once); false when it was already gone. */
export async function deleteAuthorization(login: string, id: number): Promise<boolean> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const state = await readUserAuthState(login);
    const authorization = state.authorizations.find((a) => a.id === id);
    if (!authorization) return false;
    const items = deleteAuthorizationItems(authorization, state.owned.get(id) ?? {});
    const grantItem = grantChange(
      login,
      authorization.clientId,
      state.grants.get(authorization.clientId),
      -1,
      undefined,
      now(),
    );
    if (grantItem) items.push(grantItem);
    if ((await transact(items)) === 'ok') return true;
    await backoff(attempt);
  }
  throw new Error('deleteAuthorization: too much contention');
}

/**
 * Revokes a user's grant for an application: raises its generation first (outstanding codes die,
 * and a token being minted from an earlier read cannot commit), then deletes every token of the
 * application for the user, read strongly consistently after the raise (so a token committed
 * before it is among them); the grant goes with the last one.
 */
export async function deleteGrant(login: string, clientId: string): Promise<number> {
  await raiseGrantGeneration(login, clientId);
  const state = await readUserAuthState(login);
  const ids = state.authorizations.filter((a) => a.clientId === clientId).map((a) => a.id);
  let deleted = 0;
  for (const id of ids) if (await deleteAuthorization(login, id)) deleted++;
  return deleted;
}

export interface AuthorizationChanges {
  readonly scopes?: readonly Scope[];
  readonly note?: string | null;
  readonly noteUrl?: string | null;
  readonly fingerprint?: string | null;
}

export type UpdateResult =
  | { readonly kind: 'updated'; readonly authorization: Authorization }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'note-taken' }
  | { readonly kind: 'fingerprint-taken' };

/**
 * Applies changes to an authorization and its token lookup together, moving the note and
 * fingerprint pointers when those change (a clash with another authorization refuses the whole
 * update).
 */
export async function updateAuthorization(
  login: string,
  id: number,
  changes: AuthorizationChanges,
): Promise<UpdateResult> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const { Item } = await db().send(
      new GetCommand({ TableName: tableName(), Key: authorizationKey(login, id), ConsistentRead: true }),
    );
    if (!Item) return { kind: 'not-found' };
    const current = toAuthorization(Item);
    const pointers = ownedPointers(Item);
    const timestamp = now();
    const next: Authorization = {
      ...current,
      ...(changes.scopes !== undefined ? { scopes: changes.scopes } : {}),
      ...(changes.note !== undefined ? { note: changes.note } : {}),
      ...(changes.noteUrl !== undefined ? { noteUrl: changes.noteUrl } : {}),
      ...(changes.fingerprint !== undefined ? { fingerprint: changes.fingerprint } : {}),
      updatedAt: timestamp,
    };
    const partition = userPartition(login);
    const items: TransactItem[] = [];
    let nextPointers: OwnedPointers = { ...pointers };
    let noteIndex = -1;
    let fingerprintIndex = -1;
    if (current.clientId === '' && next.note !== current.note && next.note !== null) {
      const sk = notePointerKey(login, noteHash(next.note)).SK;
      if (pointers.note) items.push(deletePointer({ PK: partition, SK: pointers.note }, id));
      noteIndex = items.push(putPointer({ PK: partition, SK: sk }, id, timestamp)) - 1;
      nextPointers = { ...nextPointers, note: sk };
    }
    if (current.clientId !== '' && (next.fingerprint ?? '') !== (current.fingerprint ?? '')) {
      if (pointers.fingerprint) items.push(deletePointer({ PK: partition, SK: pointers.fingerprint }, id));
      const { fingerprint: _, ...rest } = nextPointers;
      nextPointers = rest;
      if ((next.fingerprint ?? '') !== '') {
        const sk = fingerprintPointerKey(login, current.clientId, next.fingerprint ?? '').SK;
        fingerprintIndex = items.push(putPointer({ PK: partition, SK: sk }, id, timestamp)) - 1;
        nextPointers = { ...nextPointers, fingerprint: sk };
      }
    }
    items.push(
      {
        Update: {
          TableName: table(),
          Key: authorizationKey(login, id),
          UpdateExpression:
            'SET #scopes = :scopes, #note = :note, #noteUrl = :noteUrl, #fingerprint = :fingerprint, #updatedAt = :now, #pointers = :pointers',
          ConditionExpression: '#tokenHash = :hash',
          ExpressionAttributeNames: {
            '#scopes': 'scopes',
            '#note': 'note',
            '#noteUrl': 'noteUrl',
            '#fingerprint': 'fingerprint',
            '#updatedAt': 'updatedAt',
            '#pointers': 'pointers',
            '#tokenHash': 'tokenHash',
          },
          ExpressionAttributeValues: {
            ':scopes': next.scopes,
            ':note': next.note,
            ':noteUrl': next.noteUrl,
            ':fingerprint': next.fingerprint,
            ':now': timestamp,
            ':pointers': nextPointers,
            ':hash': current.tokenHash,
          },
        },
      },
      putToken(next, 'replace'),
    );
    const outcome = await transact(items);
    if (outcome === 'ok') return { kind: 'updated', authorization: next };
    if (outcome !== 'conflict' && outcome.failedIndex === noteIndex) return { kind: 'note-taken' };
    if (outcome !== 'conflict' && outcome.failedIndex === fingerprintIndex)
      return { kind: 'fingerprint-taken' };
    await backoff(attempt);
  }
  throw new Error('updateAuthorization: too much contention');
}

/**
 * Replaces an authorization's token: the new lookup appears and the old one disappears in the
 * same transaction, so the old token fails on the very next request. Undefined when the
 * authorization no longer has `expectedHash` (revoked or reset meanwhile).
 */
export async function resetToken(
  current: Authorization,
  next: { readonly tokenHash: string; readonly tokenLastEight: string },
): Promise<Authorization | undefined> {
  const timestamp = now();
  const authorization: Authorization = {
    ...current,
    tokenHash: next.tokenHash,
    tokenLastEight: next.tokenLastEight,
    updatedAt: timestamp,
  };
  const outcome = await transact([
    putToken(authorization, 'create'),
    {
      Delete: {
        TableName: table(),
        Key: tokenKey(current.tokenHash),
        ConditionExpression: 'attribute_exists(PK)',
      },
    },
    {
      Update: {
        TableName: table(),
        Key: authorizationKey(current.login, current.id),
        UpdateExpression: 'SET #tokenHash = :new, #tokenLastEight = :last, #updatedAt = :now',
        ConditionExpression: '#tokenHash = :old',
        ExpressionAttributeNames: {
          '#tokenHash': 'tokenHash',
          '#tokenLastEight': 'tokenLastEight',
          '#updatedAt': 'updatedAt',
        },
        ExpressionAttributeValues: {
          ':new': next.tokenHash,
          ':last': next.tokenLastEight,
          ':now': timestamp,
          ':old': current.tokenHash,
        },
      },
    },
  ]);
  return outcome === 'ok' ? authorization : undefined;
}
