import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Authorization } from '#domain/authorizations';
import type { Scope } from '#domain/scopes';
import {
  deleteAuthorizationItems,
  deletePointer,
  deleteToken,
  noteHash,
  putPointer,
  putToken,
  replaceTokenHash,
} from './authorization-items.ts';
import {
  type GrantItem,
  getRingEntry,
  type OwnedPointers,
  ownedPointers,
  readUserAuthState,
  toAuthorization,
} from './authorization-state.ts';
import { db, now, RETRY, retryOnConflict, type TransactItem, tableName, transact } from './client.ts';
import {
  authorizationKey,
  fingerprintPointerKey,
  grantGenerationKey,
  grantKey,
  notePointerKey,
  userPartition,
} from './keys.ts';
import { TABLE } from './table.ts';
import { liveCountAttribute, patchEntry, RING_VERSION, scopeSetKey } from './token-ring.ts';

/** Changing existing authorizations: delete, revoke a grant, update, reset the token. */

/**
 * Deletes an authorization (its token stops working at once); false when it was already gone.
 * `along` gives items written in the same transaction (its security event).
 */
export const deleteAuthorization = (
  login: string,
  id: number,
  along?: (authorization: Authorization) => readonly TransactItem[],
): Promise<boolean> => deleteAuthorizationWith(login, id, along && { tokenHash: undefined, along });

/**
 * Revokes a reported credential's authorization and leaves its owner `notice`, in one
 * transaction: the notice exists exactly when the revocation happened. `tokenHash` (a reported
 * access token) revokes only while the authorization still has that token: one reset since the
 * token leaked already made it worthless, and the new token is not the reporter's to revoke.
 * Without it (a reported refresh token), the family goes whatever its current access token.
 */
export const revokeReportedAuthorization = (
  login: string,
  id: number,
  tokenHash: string | undefined,
  notice: (authorization: Authorization) => readonly TransactItem[],
): Promise<boolean> => deleteAuthorizationWith(login, id, { tokenHash, along: notice });

async function deleteAuthorizationWith(
  login: string,
  id: number,
  options?: {
    /** Only while the authorization has this token (a reported access token). */
    tokenHash: string | undefined;
    along: (authorization: Authorization) => readonly TransactItem[];
  },
): Promise<boolean> {
  return retryOnConflict('deleteAuthorization', async () => {
    const state = await readUserAuthState(login);
    const authorization = state.authorizations.find((a) => a.id === id);
    if (!authorization) return false;
    if (options?.tokenHash !== undefined && authorization.tokenHash !== options.tokenHash) return false;
    const items = deleteAuthorizationItems(authorization, state.owned.get(id) ?? {});
    if (options) items.push(...options.along(authorization));
    const ringItem = leaveRing(
      authorization,
      state.ringEntries.get(id),
      state.grants.get(authorization.clientId),
    );
    if (ringItem) items.push(ringItem);
    return (await transact(items)) === 'ok' ? true : RETRY;
  });
}

/**
 * The grant item's part of deleting an application token: its ring entry goes, and its scope set's
 * live count with it (the authorization's scopes are its entry's: the two change together); with
 * the last entry, the grant's identity goes too (a later grant is a new one), conditioned on no
 * creation having registered since the read.
 */
function leaveRing(
  authorization: Authorization,
  entry: string | undefined,
  grant: GrantItem | undefined,
): TransactItem | undefined {
  const { login, clientId } = authorization;
  if (!clientId || !grant) return undefined;
  const others = grant.ringEntries.filter((name) => name !== entry);
  const last = others.length === 0;
  if (!entry && !last) return undefined;
  const remove = [...(entry ? ['#entry'] : []), ...(last ? ['#id', '#createdAt'] : [])];
  return {
    Update: {
      TableName: tableName(),
      Key: grantKey(login, clientId),
      UpdateExpression: `SET #updatedAt = :now REMOVE ${remove.join(', ')}${entry ? ' ADD #live :leave' : ''}`,
      // Not the last: another entry is still there (of two concurrent deletions of the last two
      // tokens, the second then sees itself last); the last: nothing registered since the read.
      // The entry still has the scopes read (a move to another scope set since then changed
      // which count it is in; the deletion then reads again).
      ConditionExpression: `${last ? '#ver = :ver' : 'attribute_exists(#other)'}${entry ? ' AND (attribute_not_exists(#entry) OR #entry.#scopes = :scopes)' : ''}`,
      ExpressionAttributeNames: {
        '#updatedAt': 'updatedAt',
        ...(entry
          ? {
              '#entry': entry,
              '#scopes': 'scopes',
              '#live': liveCountAttribute(scopeSetKey(authorization.scopes)),
            }
          : {}),
        ...(last
          ? { '#id': 'id', '#createdAt': 'createdAt', '#ver': RING_VERSION }
          : { '#other': others[0] as string }),
      },
      ExpressionAttributeValues: {
        ':now': now(),
        ...(entry ? { ':leave': -1, ':scopes': authorization.scopes } : {}),
        ...(last ? { ':ver': grant.ringVersion } : {}),
      },
    },
  };
}

/**
 * Raises the user's grant generation for an application: from now on, codes issued before and
 * tokens being minted from a state read before cannot be turned into tokens.
 */
async function raiseGrantGeneration(login: string, clientId: string): Promise<number> {
  const { Attributes } = await db().send(
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
        ':now': now(),
      },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(Attributes?.generation ?? 0);
}

/**
 * Revokes a user's grant for an application: raises its generation first (outstanding codes die,
 * and a token being minted from an earlier read cannot commit), then deletes every token of the
 * application for the user, read strongly consistently after the raise (so a token committed
 * before it is among them); the grant goes with the last one. Returns how many tokens went and
 * the generation the revocation raised the grant to (what names this revocation).
 */
export async function deleteGrant(
  login: string,
  clientId: string,
): Promise<{ readonly deleted: number; readonly generation: number }> {
  const generation = await raiseGrantGeneration(login, clientId);
  const state = await readUserAuthState(login);
  const ids = state.authorizations.filter((a) => a.clientId === clientId).map((a) => a.id);
  let deleted = 0;
  for (const id of ids) if (await deleteAuthorization(login, id)) deleted++;
  return { deleted, generation };
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
  return retryOnConflict('updateAuthorization', async () => {
    const { Item } = await db().send(
      new GetCommand({ TableName: tableName(), Key: authorizationKey(login, id), ConsistentRead: true }),
    );
    if (!Item) return { kind: 'not-found' } as const;
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
    const ringEntry = typeof Item.ringEntry === 'string' ? Item.ringEntry : undefined;
    const scopesChanged = JSON.stringify(next.scopes) !== JSON.stringify(current.scopes);
    const fingerprintMoved = (nextPointers.fingerprint ?? null) !== (pointers.fingerprint ?? null);
    if (current.clientId !== '' && ringEntry && (scopesChanged || fingerprintMoved))
      items.push(
        patchEntry(login, current.clientId, ringEntry, {
          ...(scopesChanged ? { scopes: { from: current.scopes, to: next.scopes } } : {}),
          ...(fingerprintMoved ? { fp: nextPointers.fingerprint ?? null } : {}),
        }),
      );
    items.push(
      {
        Update: {
          TableName: tableName(),
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
    if (outcome === 'ok') return { kind: 'updated', authorization: next } as const;
    if (outcome !== 'conflict' && outcome.failedIndex === noteIndex) return { kind: 'note-taken' } as const;
    if (outcome !== 'conflict' && outcome.failedIndex === fingerprintIndex)
      return { kind: 'fingerprint-taken' } as const;
    return RETRY;
  });
}

/**
 * Replaces an authorization's token: the new lookup appears and the old one disappears in the
 * same transaction, so the old token fails on the very next request. Undefined when the
 * authorization no longer has `current.tokenHash` (revoked or reset meanwhile).
 */
export async function resetToken(
  current: Authorization,
  next: { readonly tokenHash: string; readonly tokenLastEight: string },
  along: readonly TransactItem[] = [],
): Promise<Authorization | undefined> {
  // An application token's ring entry names its token hash (the limit revokes by it): read where it is.
  const ringEntry = current.clientId ? await getRingEntry(current.login, current.id) : undefined;
  const timestamp = now();
  const authorization: Authorization = {
    ...current,
    tokenHash: next.tokenHash,
    tokenLastEight: next.tokenLastEight,
    updatedAt: timestamp,
  };
  const outcome = await transact([
    putToken(authorization, 'create'),
    deleteToken(current.tokenHash),
    replaceTokenHash(current, { tokenHash: next.tokenHash, tokenLastEight: next.tokenLastEight }, timestamp),
    ...(ringEntry
      ? [patchEntry(current.login, current.clientId, ringEntry, { hash: next.tokenHash }, current.tokenHash)]
      : []),
    ...along,
  ]);
  return outcome === 'ok' ? authorization : undefined;
}
