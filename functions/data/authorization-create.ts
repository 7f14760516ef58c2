import type { Authorization } from '#domain/authorizations';
import {
  checkGrantGeneration,
  deleteAuthorizationItems,
  grantChange,
  noteHash,
  putAuthorization,
  putPointer,
  putToken,
} from './authorization-items.ts';
import { type OwnedPointers, readUserAuthState, type UserAuthState } from './authorization-state.ts';
import { now, RETRY, retryOnConflict, type TransactItem, tableName, transact } from './client.ts';
import { nextId } from './counters.ts';
import { authorizationKey, fingerprintPointerKey, notePointerKey, userPartition } from './keys.ts';
import { type NewRefreshToken, putRefreshToken } from './refresh-tokens.ts';
import { ITEM_EXISTS } from './table.ts';

/** Creating authorizations: plain creation and get-or-create for an application. */

/**
 * Which existing authorization of the user one more creation revokes (the token limit), or
 * undefined; decided by the caller's rule on every fresh read of the user's authorizations.
 */
export type Evict = (existing: readonly Authorization[]) => Authorization | undefined;

/** A new authorization's fields (id and timestamps are assigned here). */
export type NewAuthorization = Omit<
  Authorization,
  'id' | 'createdAt' | 'updatedAt' | 'lastUsedAt' | 'expiresAt'
> & {
  /** When the token expires (ISO 8601); absent or null: never. */
  readonly expiresAt?: string | null;
  /** The refresh token issued with an expiring token, written in the same transaction. */
  readonly refresh?: NewRefreshToken;
  /** Make this the authorization get-or-create returns for (app, fingerprint); refused if taken. */
  readonly claimFingerprint: boolean;
  /**
   * Create only while the user's grant for the application is at this generation (a code's
   * generation); `grant-revoked` otherwise. Without it, the generation read with the state counts.
   */
  readonly grantGeneration?: number;
  readonly evict: Evict;
};

export type CreateResult =
  | { readonly kind: 'created'; readonly authorization: Authorization; readonly revoked?: Authorization }
  | { readonly kind: 'note-taken' }
  | { readonly kind: 'fingerprint-taken' }
  | { readonly kind: 'grant-revoked' };

/**
 * Creates an authorization in one transaction with its token lookup, its uniqueness pointers
 * (personal note; app + fingerprint when claimed), its grant's count, the check that the grant
 * was not revoked since the read, and, when `evict` names one, the revocation of an existing
 * authorization (the token limit). Retries on concurrent change, from a fresh read.
 */
export async function createAuthorization(
  input: NewAuthorization,
  known?: UserAuthState,
): Promise<CreateResult> {
  const id = await nextId('authorization');
  let newGrantId: number | undefined;
  return retryOnConflict('createAuthorization', async (attempt) => {
    const state = attempt === 0 && known ? known : await readUserAuthState(input.login);
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
      expiresAt: input.expiresAt ?? null,
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
      return { kind: 'grant-revoked' } as const;
    const grant = state.grants.get(input.clientId);
    if (input.clientId && !grant && newGrantId === undefined) newGrantId = await nextId('grant');
    const oldest = input.evict(state.authorizations);

    const partition = userPartition(input.login);
    const items: TransactItem[] = [
      putAuthorization(authorization, pointers, input.refresh?.tokenHash),
      putToken(authorization, 'create'),
    ];
    if (input.refresh) items.push(putRefreshToken(input.refresh, authorization, timestamp));
    const noteIndex = pointers.note
      ? items.push(putPointer({ PK: partition, SK: pointers.note }, id, timestamp)) - 1
      : -1;
    const fingerprintIndex = pointers.fingerprint
      ? items.push(putPointer({ PK: partition, SK: pointers.fingerprint }, id, timestamp)) - 1
      : -1;
    if (oldest) items.push(...deleteAuthorizationItems(oldest, state.owned.get(oldest.id) ?? {}));
    const grantItem = grantChange(input.login, input.clientId, grant, oldest ? 0 : 1, newGrantId, timestamp);
    if (grantItem) items.push(grantItem);
    const generationIndex = input.clientId
      ? items.push(checkGrantGeneration(input.login, input.clientId, generation)) - 1
      : -1;

    const outcome = await transact(items);
    if (outcome === 'ok') return { kind: 'created', authorization, ...(oldest ? { revoked: oldest } : {}) };
    if (outcome === 'conflict') return RETRY;
    if (outcome.failedIndex === noteIndex) return { kind: 'note-taken' };
    if (outcome.failedIndex === fingerprintIndex) return { kind: 'fingerprint-taken' };
    if (outcome.failedIndex === generationIndex && input.grantGeneration !== undefined)
      return { kind: 'grant-revoked' };
    return RETRY; // another expectation about the state read (grant count, oldest token) failed
  });
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
  input: Omit<NewAuthorization, 'claimFingerprint' | 'grantGeneration'>,
): Promise<GetOrCreateResult> {
  const fingerprint = input.fingerprint ?? '';
  const pointerKey = fingerprintPointerKey(input.login, input.clientId, fingerprint);
  return retryOnConflict('getOrCreateAuthorization', async () => {
    const state = await readUserAuthState(input.login);
    const pointed = state.pointers.get(pointerKey.SK);
    const existing =
      state.authorizations.find((a) => a.id === pointed) ??
      state.authorizations.find(
        (a) => a.clientId === input.clientId && (a.fingerprint ?? '') === fingerprint,
      );
    if (existing) {
      if (pointed === existing.id) return { kind: 'existing', authorization: existing } as const;
      // Adopt it: point at it and record that it owns the pointer, atomically.
      const outcome = await transact([
        putPointer(pointerKey, existing.id, now(), pointed),
        {
          Update: {
            TableName: tableName(),
            Key: authorizationKey(existing.login, existing.id),
            UpdateExpression: 'SET #pointers.#fingerprint = :sk',
            ExpressionAttributeNames: { '#pointers': 'pointers', '#fingerprint': 'fingerprint' },
            ConditionExpression: ITEM_EXISTS,
            ExpressionAttributeValues: { ':sk': pointerKey.SK },
          },
        },
      ]);
      return outcome === 'ok' ? ({ kind: 'existing', authorization: existing } as const) : RETRY;
    }
    const created = await createAuthorization({ ...input, claimFingerprint: true }, state);
    if (created.kind === 'created') return { kind: 'created', authorization: created.authorization } as const;
    if (created.kind === 'fingerprint-taken') return RETRY; // a concurrent identical request won: read it
    throw new Error(`unreachable: ${created.kind} for get-or-create`);
  });
}
