import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Authorization } from '#domain/authorizations';
import type { Scope } from '#domain/scopes';
import {
  checkGrantGeneration,
  deleteAuthorizationItems,
  noteHash,
  putAuthorization,
  putPointer,
  putToken,
} from './authorization-items.ts';
import { getGrantGeneration, type OwnedPointers, readUserAuthState } from './authorization-state.ts';
import {
  backoff,
  conditionalWrite,
  db,
  now,
  RETRY,
  retryOnConflict,
  type TransactItem,
  tableName,
  transact,
} from './client.ts';
import { nextId } from './counters.ts';
import { authorizationKey, fingerprintPointerKey, notePointerKey, userPartition } from './keys.ts';
import { type NewRefreshToken, putRefreshToken } from './refresh-tokens.ts';
import { ITEM_EXISTS } from './table.ts';
import {
  commitEntry,
  entriesOf,
  entryAttribute,
  limitVictim,
  registerRequest,
  scopeSetKey,
  unregisterRequest,
  victimOf,
} from './token-ring.ts';

/** Creating authorizations: plain creation and get-or-create for an application. */

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
   * Create only while the user's grant for the application is at this generation (a code's);
   * `grant-revoked` otherwise. Without it, the generation read while registering counts.
   */
  readonly grantGeneration?: number;
  /**
   * A write that must commit with the token, or neither happens (a code's single-use claim,
   * recording the authorization id it is given); `claim-refused` when its condition fails.
   */
  readonly claim?: (authorizationId: number) => TransactItem;
  /** Items written with a personal access token, in its transaction (its security event). */
  readonly along?: (authorization: Authorization) => readonly TransactItem[];
  /**
   * The token limit for an application's token: creating one more in the user's, application's
   * and scope set's ring revokes the oldest beyond this many (the domain's rule).
   */
  readonly limit?: number;
};

export type CreateResult =
  | {
      readonly kind: 'created';
      readonly authorization: Authorization;
      /**
       * A newer token of the same user, application and scope set took this one's place while
       * it was being created (more than ten were being created at once): it was revoked by the
       * token limit before it was ever stored, and authenticates nothing.
       */
      readonly superseded?: true;
      /** The token the limit revoked for this one. */
      readonly revoked?: { readonly id: number; readonly scopes: readonly Scope[] };
    }
  | { readonly kind: 'note-taken' }
  | { readonly kind: 'fingerprint-taken' }
  | { readonly kind: 'grant-revoked' }
  | { readonly kind: 'claim-refused' };

const newAuthorization = (input: NewAuthorization, id: number, timestamp: string): Authorization => ({
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
  ...(input.resource ? { resource: input.resource } : {}),
});

/**
 * Creates an authorization: a personal access token with its unique note, or an application's
 * token under the 10-token limit (see `createAppAuthorization`).
 */
export function createAuthorization(input: NewAuthorization): Promise<CreateResult> {
  return input.clientId ? createAppAuthorization(input) : createPersonalAuthorization(input);
}

/** A personal access token: no grant and no limit; its note pointer's conditional put keeps notes unique. */
async function createPersonalAuthorization(input: NewAuthorization): Promise<CreateResult> {
  const id = await nextId('authorization');
  return retryOnConflict('createAuthorization', async () => {
    const authorization = newAuthorization(input, id, now());
    const pointers: OwnedPointers =
      input.note !== null ? { note: notePointerKey(input.login, noteHash(input.note)).SK } : {};
    const items: TransactItem[] = [
      putAuthorization(authorization, pointers),
      putToken(authorization, 'create'),
    ];
    const noteIndex = pointers.note
      ? items.push(
          putPointer({ PK: userPartition(input.login), SK: pointers.note }, id, authorization.createdAt),
        ) - 1
      : -1;
    items.push(...(input.along?.(authorization) ?? []));
    const outcome = await transact(items);
    if (outcome === 'ok') return { kind: 'created', authorization };
    if (outcome === 'conflict') return RETRY;
    if (outcome.failedIndex === noteIndex) return { kind: 'note-taken' };
    throw new Error(`createAuthorization: unexpected failed condition at ${outcome.failedIndex}`);
  });
}

/** Attempts at committing one application token before giving up (each follows a failed condition or a conflict). */
const MAX_COMMITS = 12;

/**
 * Creates an application's token in two round trips without reading the user's authorizations:
 * the registration in the grant's token ring (one UpdateItem that returns the ring; the new id is
 * taken at the same time), then one transaction with the authorization, its token lookup, its
 * refresh token and fingerprint pointer, the caller's claim, the check that the grant was not
 * revoked, the entry made live, and the revocation of the token the limit names (see
 * token-ring.ts). Concurrent creations for the same user and application touch different
 * entries and revoke different tokens, so none of them cancels another; a failed condition on the
 * ring (a concurrent deletion or revocation by another path, a twelfth creation under way) is
 * decided again from the item the failure returns, never from a new read.
 */
async function createAppAuthorization(input: NewAuthorization): Promise<CreateResult> {
  const { login, clientId, scopes, tokenHash } = input;
  const attribute = entryAttribute(scopes, tokenHash);
  const setKey = scopeSetKey(scopes);
  const [id, registered, firstGeneration] = await Promise.all([
    nextId('authorization'),
    db().send(new UpdateCommand(registerRequest(login, clientId, scopes, tokenHash, now()))),
    input.grantGeneration ?? getGrantGeneration(login, clientId),
  ]);
  let generation = firstGeneration;
  let grant = registered.Attributes ?? {};
  const seq = Number(grant[attribute]);
  const grantId = grant.id === undefined ? await nextId('grant') : undefined;
  const fingerprintSk = input.claimFingerprint
    ? fingerprintPointerKey(login, clientId, input.fingerprint ?? '').SK
    : undefined;
  const pointers: OwnedPointers = fingerprintSk ? { fingerprint: fingerprintSk } : {};
  /** Takes the pending entry back; true when it was still there (no newer creation superseded it). */
  const unregister = async () => {
    const written = await conditionalWrite(
      db().send(new UpdateCommand(unregisterRequest(login, clientId, attribute))),
    );
    if (written === false) return true;
    grant = written.Attributes ?? {};
    return typeof grant[attribute] === 'number';
  };
  /** Victims whose authorization is already gone (only their entry is left to drop). */
  const orphans = new Set<string>();
  /** Whether this creation still commits its token (false once a newer creation superseded it). */
  let live = true;
  /** Why this creation failed, while it still owes the limit a revocation (it was superseded). */
  let refused: CreateResult | undefined;
  const { limit } = input;
  // Decided on the item as this registration left it: concurrent creations decide on the same
  // entries in the same order, so each has its own victim (see token-ring.ts).
  let victim = limit === undefined ? undefined : victimOf(grant, setKey, limit, attribute);
  /** Decides the victim again on `grant` as last seen. */
  const decideAgain = () => {
    if (victim) victim = entriesOf(grant, setKey).find((entry) => entry.attribute === victim?.attribute);
    if (limit !== undefined)
      victim = limitVictim(victim, grant, setKey, limit, live ? 'adds' : 'owes', attribute);
  };

  for (let attempt = 0; attempt < MAX_COMMITS; attempt++) {
    if (attempt > 0) await backoff(attempt - 1);
    const timestamp = now();
    const authorization = newAuthorization(input, id, timestamp);
    const items: TransactItem[] = [];
    const claimIndex = input.claim && !refused ? items.push(input.claim(id)) - 1 : -1;
    let generationIndex = -1;
    let fingerprintIndex = -1;
    if (live) {
      items.push(putAuthorization(authorization, pointers, input.refresh?.tokenHash, attribute));
      items.push(putToken(authorization, 'create'));
      if (input.refresh) items.push(putRefreshToken(input.refresh, authorization, timestamp));
      if (fingerprintSk)
        fingerprintIndex =
          items.push(putPointer({ PK: userPartition(login), SK: fingerprintSk }, id, timestamp)) - 1;
      generationIndex = items.push(checkGrantGeneration(login, clientId, generation)) - 1;
    }
    const ringIndex =
      items.push(
        commitEntry({
          login,
          clientId,
          setKey,
          ...(input.limit !== undefined ? { limit: input.limit } : {}),
          ...(live
            ? {
                mine: {
                  attribute,
                  token: {
                    seq,
                    id,
                    hash: tokenHash,
                    scopes,
                    ...(fingerprintSk ? { fp: fingerprintSk } : {}),
                  },
                },
              }
            : {}),
          ...(victim ? { victim } : {}),
          ...(grantId !== undefined ? { grantId } : {}),
          timestamp,
        }),
      ) - 1;
    if (victim?.kind === 'live' && !orphans.has(victim.attribute))
      items.push(
        ...deleteAuthorizationItems(
          { login, id: victim.token.id, tokenHash: victim.token.hash },
          victim.token.fp ? { fingerprint: victim.token.fp } : {},
        ),
      );

    const outcome = await transact(items);
    if (outcome === 'ok') {
      if (refused) return refused;
      return {
        kind: 'created',
        authorization,
        ...(live ? {} : { superseded: true as const }),
        ...(victim?.kind === 'live' ? { revoked: { id: victim.token.id, scopes: victim.token.scopes } } : {}),
      };
    }
    if (outcome === 'conflict') continue;
    const failed = new Set(outcome.failed);
    if (failed.has(generationIndex) && input.grantGeneration === undefined) {
      // Revoked after the generation was read, with no code to hold to it: this creation comes after.
      generation = await getGrantGeneration(login, clientId);
      continue;
    }
    const why: CreateResult | undefined = failed.has(claimIndex)
      ? { kind: 'claim-refused' }
      : failed.has(generationIndex)
        ? { kind: 'grant-revoked' }
        : failed.has(fingerprintIndex)
          ? { kind: 'fingerprint-taken' }
          : undefined;
    if (why) {
      // Nothing was created: the pending entry goes (a creation that did not happen holds no
      // place). But a newer creation that superseded it took a place in its stead, counting on
      // this one's revocation: that is still owed, without the claim.
      refused = why;
      if (failed.has(ringIndex)) grant = outcome.items.get(ringIndex) ?? grant;
      if (live && typeof grant[attribute] === 'number' && (await unregister())) return why;
      live = false;
      decideAgain();
      if (!victim) return why;
    } else if (failed.has(ringIndex)) {
      grant = outcome.items.get(ringIndex) ?? grant;
      // A newer creation revoked this one while it was pending: its own duty (the victim) remains.
      if (typeof grant[attribute] !== 'number') live = false;
      // The victim was created meanwhile (revoke it as a token), reset or rotated (revoke it by
      // its new hash), or it is gone (deleted, or a creation that did not happen); or the live
      // count has no room for one more without a victim.
      decideAgain();
      if (refused && !victim) return refused;
    } else if (victim) {
      // The ring named a token whose authorization is gone: only its entry is left to drop. (A
      // victim reset or rotated since the ring was read fails the ring's condition too, above:
      // every reset and rotation moves the entry's hash with the authorization's.)
      orphans.add(victim.attribute);
    }
  }
  if (refused) return refused;
  if (live) await unregister();
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
  input: Omit<NewAuthorization, 'claimFingerprint' | 'grantGeneration' | 'claim'>,
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
    const created = await createAuthorization({ ...input, claimFingerprint: true });
    if (created.kind === 'created') return { kind: 'created', authorization: created.authorization } as const;
    if (created.kind === 'fingerprint-taken') return RETRY; // a concurrent identical request won: read it
    throw new Error(`unreachable: ${created.kind} for get-or-create`);
  });
}
