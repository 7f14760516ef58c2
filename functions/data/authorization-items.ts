import { createHash } from 'node:crypto';
import type { Authorization } from '#domain/authorizations';
import type { OwnedPointers } from './authorization-state.ts';
import { type TransactItem, tableName } from './client.ts';
import {
  appAuthorizationIndexKey,
  authorizationKey,
  grantGenerationKey,
  type Key,
  tokenKey,
  userPartition,
} from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, typed } from './table.ts';

/**
 * Transaction builders for authorizations: pure functions from domain values to
 * TransactWriteItems entries. Items are written from explicit field lists, never from a spread of
 * whatever object a caller passed (which once stored a fresh plaintext token that rode along).
 */

export const noteHash = (note: string): string => createHash('sha256').update(note).digest('hex');

/**
 * The stored fields of an authorization, named one by one. A token's expiry is `tokenExpiresAt`
 * (ISO 8601), not the table's TTL attribute `expiresAt`: a TTL deletion would bypass the grant's
 * token count, the lookup item and the pointers that every other deletion keeps in step.
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
  tokenExpiresAt: a.expiresAt,
  // Absent for a REST API token, so that every item from before resource indicators reads the same.
  ...(a.resource ? { resource: a.resource } : {}),
});

/**
 * `refreshHash`: the hash of the refresh token issued with an expiring token (the family's current
 * one); kept on the authorization item only, never copied to the token lookup.
 */
export function putAuthorization(
  a: Authorization,
  pointers: OwnedPointers,
  refreshHash?: string,
  ringEntry?: string,
): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...authorizationKey(a.login, a.id),
        ...(a.clientId ? appAuthorizationIndexKey(a.clientId, a.login, a.id) : {}),
        ...typed('Authorization'),
        id: a.id,
        ...authorizationFields(a),
        pointers,
        ...(refreshHash ? { refreshHash } : {}),
        // The attribute of its entry in the grant's token ring (see token-ring.ts).
        ...(ringEntry ? { ringEntry } : {}),
      },
      ConditionExpression: ITEM_ABSENT,
    },
  };
}

/**
 * The token lookup item: what a token request needs (login, authorization id, client, scopes) and
 * a copy of the authorization's other fields, always written in the same transaction as the
 * authorization item, so that the application-side endpoints get everything they answer with in
 * the round trip that reads the application.
 */
export function putToken(a: Authorization, mode: 'create' | 'replace'): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...tokenKey(a.tokenHash),
        ...typed('TokenLookup'),
        authorizationId: a.id,
        ...authorizationFields(a),
      },
      ConditionExpression: mode === 'create' ? ITEM_ABSENT : ITEM_EXISTS,
    },
  };
}

export function deleteToken(tokenHash: string): TransactItem {
  return { Delete: { TableName: tableName(), Key: tokenKey(tokenHash), ConditionExpression: ITEM_EXISTS } };
}

/**
 * A uniqueness pointer to an authorization: absent before (`create`), or still pointing at
 * `previous` (moved to another authorization).
 */
export function putPointer(
  key: Key,
  authorizationId: number,
  timestamp: string,
  previous?: number,
): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...key, ...typed('Pointer'), authorizationId, createdAt: timestamp, updatedAt: timestamp },
      ...(previous === undefined
        ? { ConditionExpression: ITEM_ABSENT }
        : {
            ConditionExpression: '#authorizationId = :old',
            ExpressionAttributeNames: { '#authorizationId': 'authorizationId' },
            ExpressionAttributeValues: { ':old': previous },
          }),
    },
  };
}

export function deletePointer(key: Key, authorizationId: number): TransactItem {
  return {
    Delete: {
      TableName: tableName(),
      Key: key,
      ConditionExpression: '#authorizationId = :id',
      ExpressionAttributeNames: { '#authorizationId': 'authorizationId' },
      ExpressionAttributeValues: { ':id': authorizationId },
    },
  };
}

/**
 * Deletes an authorization with its token lookup and the pointers it owns, only while the
 * authorization still has the token hash that was read (`tokenHash`). A reset or refresh that
 * commits between the read and this transaction moves the authorization and its lookup to a new
 * hash; without the condition, the old lookup would be deleted and the new one left behind, a
 * token that authenticates while nothing lists or revokes it. When the condition fails, the
 * authorization as it is comes back (`ALL_OLD`), so the caller can delete it by its new hash.
 * The lookup's deletion needs no condition of its own: the authorization and its lookup are
 * always written together, so while the authorization has `tokenHash`, that lookup is its.
 */
export function deleteAuthorizationItems(
  a: Pick<Authorization, 'login' | 'id' | 'tokenHash'>,
  pointers: OwnedPointers,
): TransactItem[] {
  const items: TransactItem[] = [
    {
      Delete: {
        TableName: tableName(),
        Key: authorizationKey(a.login, a.id),
        ConditionExpression: '#tokenHash = :tokenHash',
        ExpressionAttributeNames: { '#tokenHash': 'tokenHash' },
        ExpressionAttributeValues: { ':tokenHash': a.tokenHash },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    { Delete: { TableName: tableName(), Key: tokenKey(a.tokenHash) } },
  ];
  const partition = userPartition(a.login);
  for (const sk of [pointers.note, pointers.fingerprint])
    if (sk) items.push(deletePointer({ PK: partition, SK: sk }, a.id));
  return items;
}

/**
 * The authorization update of a reset or a refresh: only while the authorization still exists
 * with the hash it replaces (a deletion, another reset or a rotation that committed since the
 * read cancels it). `fields` are the attributes it sets besides `updatedAt`.
 */
export function replaceTokenHash(
  a: Pick<Authorization, 'login' | 'id' | 'tokenHash'>,
  fields: Record<string, unknown>,
  timestamp: string,
  extraCondition?: { readonly attribute: string; readonly value: unknown },
): TransactItem {
  const names: Record<string, string> = { '#updatedAt': 'updatedAt', '#tokenHash': 'tokenHash' };
  const values: Record<string, unknown> = { ':now': timestamp, ':old': a.tokenHash };
  const set = ['#updatedAt = :now'];
  Object.entries(fields).forEach(([field, value], index) => {
    names[`#f${index}`] = field;
    values[`:f${index}`] = value;
    set.push(`#f${index} = :f${index}`);
  });
  let condition = '#tokenHash = :old';
  if (extraCondition) {
    names['#extra'] = extraCondition.attribute;
    values[':extra'] = extraCondition.value;
    condition += ' AND #extra = :extra';
  }
  return {
    Update: {
      TableName: tableName(),
      Key: authorizationKey(a.login, a.id),
      UpdateExpression: `SET ${set.join(', ')}`,
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Holds while the user's grant for the application is still at `generation` (no revocation since
 * it was read): the condition that keeps a token minted during a revocation from surviving it.
 */
export function checkGrantGeneration(login: string, clientId: string, generation: number): TransactItem {
  return {
    ConditionCheck: {
      TableName: tableName(),
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
