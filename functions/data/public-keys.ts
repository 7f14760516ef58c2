import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DeployKey, UserKey } from '#domain/public-keys';
import { db, now, queryAll, type TransactItem, tableName, transactWithRetry } from './client.ts';
import { nextId } from './counters.ts';
import {
  appDeployKeyIndexKey,
  appKeysIndexPartition,
  appUserKeyIndexKey,
  DEPLOY_KEY_PREFIX,
  deployKeyKey,
  type Key,
  repoKey,
  repoPartition,
  sshKeyFingerprintKey,
  USER_KEY_PREFIX,
  userKeyKey,
  userPartition,
} from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, TABLE, typed } from './table.ts';

/*
 * Users' SSH keys (in the user's partition) and repositories' deploy keys (in the repository's
 * partition). Each key is written and deleted in one transaction with its `SSHKEY#<fingerprint>`
 * pointer, so a pointer exists exactly while its key does: that makes a public key unique on the
 * whole service and lets deleting a key drop the pointer without reading it. A key created by an
 * OAuth application's token also sits in GSI1 under `APPKEYS#<login>#<client_id>`, which is how
 * revoking the user's grant for that application finds it.
 */

const toUserKey = (item: Record<string, unknown>): UserKey => ({
  id: Number(item.id),
  login: String(item.login),
  key: String(item.key),
  fingerprint: String(item.fingerprint),
  title: String(item.title ?? ''),
  clientId: String(item.clientId ?? ''),
  createdAt: String(item.createdAt),
  updatedAt: String(item.updatedAt),
});

const toDeployKey = (item: Record<string, unknown>): DeployKey => ({
  id: Number(item.id),
  owner: String(item.owner),
  repo: String(item.repo),
  createdBy: String(item.createdBy),
  key: String(item.key),
  fingerprint: String(item.fingerprint),
  title: String(item.title ?? ''),
  readOnly: Boolean(item.readOnly),
  clientId: String(item.clientId ?? ''),
  createdAt: String(item.createdAt),
  updatedAt: String(item.updatedAt),
});

// ---------------------------------------------------------------------------------------------
// Transaction builders: pure functions from domain values to TransactWriteItems entries.

function putKeyItem(key: Key, item: Record<string, unknown>): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...key, ...item },
      ConditionExpression: ITEM_ABSENT,
    },
  };
}

/** The fingerprint pointer; its condition is what refuses a key already registered anywhere. */
function putFingerprint(fingerprint: string, owner: Key, timestamp: string): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...sshKeyFingerprintKey(fingerprint),
        ...typed('SshKeyFingerprint'),
        keyPK: owner.PK,
        keySK: owner.SK,
        createdAt: timestamp,
        updatedAt: timestamp,
      },
      ConditionExpression: ITEM_ABSENT,
    },
  };
}

/**
 * Deletes a key and its fingerprint pointer. The key's condition is the only one needed: while the
 * key exists, the pointer of its fingerprint exists and is its own (they are only ever written and
 * deleted together).
 */
function deleteKeyItems(key: Key, fingerprint: string): TransactItem[] {
  return [
    { Delete: { TableName: tableName(), Key: key, ConditionExpression: ITEM_EXISTS } },
    { Delete: { TableName: tableName(), Key: sshKeyFingerprintKey(fingerprint) } },
  ];
}

// ---------------------------------------------------------------------------------------------

export interface NewKey {
  /** Normalized `<type> <base64>` and its fingerprint (see `parsePublicKey`). */
  readonly key: string;
  readonly fingerprint: string;
  readonly title: string;
  /** client_id of the creating token's application; empty for a password or personal token. */
  readonly clientId: string;
}

export type CreateUserKeyResult =
  | { readonly kind: 'created'; readonly key: UserKey }
  | { readonly kind: 'key-taken' };

export type CreateDeployKeyResult =
  | { readonly kind: 'created'; readonly key: DeployKey }
  | { readonly kind: 'key-taken' }
  | { readonly kind: 'repository-gone' };

/** Adds an SSH key to a user; `key-taken` when the public key is registered anywhere already. */
export async function createUserKey(login: string, input: NewKey): Promise<CreateUserKeyResult> {
  const id = await nextId('key');
  const timestamp = now();
  const userKey: UserKey = {
    id,
    login,
    key: input.key,
    fingerprint: input.fingerprint,
    title: input.title,
    clientId: input.clientId,
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  const key = userKeyKey(login, id);
  const outcome = await transactWithRetry(
    [
      putKeyItem(key, {
        ...(input.clientId ? appUserKeyIndexKey(login, input.clientId, id) : {}),
        ...typed('UserKey'),
        ...userKey,
      }),
      putFingerprint(input.fingerprint, key, timestamp),
    ],
    'createUserKey',
  );
  if (outcome === 'ok') return { kind: 'created', key: userKey };
  if (outcome.failedIndex === 1) return { kind: 'key-taken' };
  throw new Error(`createUserKey: key ${key.SK} exists already`);
}

export async function getUserKey(login: string, id: number): Promise<UserKey | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: userKeyKey(login, id), ConsistentRead: true }),
  );
  return Item ? toUserKey(Item) : undefined;
}

/** Every item of a partition whose sort key starts with `prefix`, in sort-key order. */
async function queryPartition(pk: string, prefix: string): Promise<Record<string, unknown>[]> {
  const { items } = await queryAll({
    KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
    ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#sk': TABLE.sortKey },
    ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
    ConsistentRead: true,
  });
  return items;
}

/** A user's SSH keys in id order. */
export async function listUserKeys(login: string): Promise<UserKey[]> {
  return (await queryPartition(userPartition(login), USER_KEY_PREFIX)).map(toUserKey);
}

/** Deletes a user's SSH key and frees its public key; false when there was no such key. */
export async function deleteUserKey(login: string, id: number): Promise<boolean> {
  const existing = await getUserKey(login, id);
  if (!existing) return false;
  const outcome = await transactWithRetry(
    deleteKeyItems(userKeyKey(login, id), existing.fingerprint),
    'deleteUserKey',
  );
  return outcome === 'ok';
}

/** The repository a deploy key is attached to: its key and the id it must still have. */
export interface DeployKeyTarget {
  readonly owner: string;
  readonly repo: string;
  readonly repositoryId: number;
}

/**
 * Adds a deploy key to a repository, conditioned on the repository (same id) still existing.
 * `createdBy` is the user whose token or password created it.
 */
export async function createDeployKey(
  target: DeployKeyTarget,
  input: NewKey & { readonly createdBy: string; readonly readOnly: boolean },
): Promise<CreateDeployKeyResult> {
  const id = await nextId('key');
  const timestamp = now();
  const deployKey: DeployKey = {
    id,
    owner: target.owner,
    repo: target.repo,
    createdBy: input.createdBy,
    key: input.key,
    fingerprint: input.fingerprint,
    title: input.title,
    readOnly: input.readOnly,
    clientId: input.clientId,
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  const key = deployKeyKey(target.owner, target.repo, id);
  const outcome = await transactWithRetry(
    [
      putKeyItem(key, {
        ...(input.clientId ? appDeployKeyIndexKey(input.createdBy, input.clientId, id) : {}),
        ...typed('DeployKey'),
        ...deployKey,
      }),
      putFingerprint(input.fingerprint, key, timestamp),
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: repoKey(target.owner, target.repo),
          ConditionExpression: '#id = :id',
          ExpressionAttributeNames: { '#id': 'id' },
          ExpressionAttributeValues: { ':id': target.repositoryId },
        },
      },
    ],
    'createDeployKey',
  );
  if (outcome === 'ok') return { kind: 'created', key: deployKey };
  if (outcome.failedIndex === 1) return { kind: 'key-taken' };
  if (outcome.failedIndex === 2) return { kind: 'repository-gone' };
  throw new Error(`createDeployKey: key ${key.SK} exists already`);
}

export async function getDeployKey(owner: string, repo: string, id: number): Promise<DeployKey | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: deployKeyKey(owner, repo, id), ConsistentRead: true }),
  );
  return Item ? toDeployKey(Item) : undefined;
}

/** A repository's deploy keys in id order. */
export async function listDeployKeys(owner: string, repo: string): Promise<DeployKey[]> {
  return (await queryPartition(repoPartition(owner, repo), DEPLOY_KEY_PREFIX)).map(toDeployKey);
}

/** Deletes a deploy key and frees its public key; false when there was no such key. */
export async function deleteDeployKey(owner: string, repo: string, id: number): Promise<boolean> {
  const existing = await getDeployKey(owner, repo, id);
  if (!existing) return false;
  const outcome = await transactWithRetry(
    deleteKeyItems(deployKeyKey(owner, repo, id), existing.fingerprint),
    'deleteDeployKey',
  );
  return outcome === 'ok';
}

/**
 * Deletes every SSH key and deploy key that `clientId`'s tokens created for `login`, each with its
 * fingerprint pointer; returns how many it deleted. For revoking a user's grant. GSI1 is
 * eventually consistent: a key created in the same instant as the revocation can be missed.
 */
export async function deleteKeysCreatedByApp(login: string, clientId: string): Promise<number> {
  if (clientId === '') return 0;
  const index = TABLE.indexes.GSI1;
  const { items } = await queryAll({
    IndexName: 'GSI1',
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeNames: { '#pk': index.partitionKey },
    ExpressionAttributeValues: { ':pk': appKeysIndexPartition(login, clientId) },
  });
  const found = items.map((item) => ({
    key: { PK: String(item[TABLE.partitionKey]), SK: String(item[TABLE.sortKey]) } as Key,
    fingerprint: String(item.fingerprint),
  }));
  let deleted = 0;
  for (const { key, fingerprint } of found)
    if ((await transactWithRetry(deleteKeyItems(key, fingerprint), 'deleteKeysCreatedByApp')) === 'ok')
      deleted++;
  return deleted;
}
