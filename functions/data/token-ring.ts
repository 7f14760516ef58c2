import { createHash } from 'node:crypto';
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Scope } from '#domain/scopes';
import { type TransactItem, tableName } from './client.ts';
import { grantKey } from './keys.ts';
import { ITEM_EXISTS, TABLE } from './table.ts';

/**
 * The token ring: the grant item's record of the application's live tokens for the user, one
 * entry per token, so that the 10-token limit knows which token one more revokes without reading
 * the user's authorizations. Every path that creates, deletes, resets, rotates or re-scopes an
 * application token keeps its entry in step in the same transaction.
 *
 * Attributes of the grant item (top-level, so that an UpdateItem can create them on an item that
 * may not exist yet):
 * - `seq#<set>`: the scope set's issue counter (never reset; the grant item is never deleted).
 * - `tok#<set>#<name>`: one token of that scope set, where `<name>` is the first 24 hex digits of
 *   the hash of the token it was registered with. A *number* while the token is being created
 *   (its issue number, written by the registration), a *map* once it exists:
 *   `{ seq, id, hash, scopes, fp? }` (`fp`: the sort key of the fingerprint pointer it owns).
 * - `ver`: raised by every registration, so that a path that decides on the whole grant (deleting
 *   its last token) can condition on nothing having been registered since it read.
 *
 * Registration is one unconditional UpdateItem (`if_not_exists(seq) + 1` for both the counter and
 * the entry), so concurrent creations never conflict there and each gets a distinct issue number.
 * Which token a creation revokes is decided by `victimOf` on the item as the registration returned
 * it: the 11th newest entry of the scope set, pending entries included. Concurrent creations see
 * the same entries in the same order plus one more each, so they pick distinct victims.
 */

export const ENTRY_PREFIX = 'tok#';
const SEQ_PREFIX = 'seq#';
const LIVE_PREFIX = 'live#';
export const RING_VERSION = 'ver';

/** A short, attribute-name-safe key for a scope set (hex of its sorted members). */
export const scopeSetKey = (scopes: readonly Scope[]): string =>
  createHash('sha256')
    .update([...scopes].sort().join(','))
    .digest('hex')
    .slice(0, 16);

export const seqAttribute = (scopes: readonly Scope[]): string => `${SEQ_PREFIX}${scopeSetKey(scopes)}`;

/** The entry attribute of a token registered with `tokenHash` in `scopes`' set. */
export const entryAttribute = (scopes: readonly Scope[], tokenHash: string): string =>
  `${ENTRY_PREFIX}${scopeSetKey(scopes)}#${tokenHash.slice(0, 24)}`;

/** The attribute counting the committed tokens of a scope set (by `scopeSetKey`). */
export const liveCountAttribute = (setKey: string): string => `${LIVE_PREFIX}${setKey}`;

/** How many committed tokens a scope set has on a grant item. */
export const liveCountOf = (item: Record<string, unknown> | undefined, setKey: string): number =>
  Number(item?.[liveCountAttribute(setKey)] ?? 0);

/** A committed entry's value. */
export interface RingToken {
  readonly seq: number;
  readonly id: number;
  readonly hash: string;
  readonly scopes: readonly Scope[];
  /** Sort key of the fingerprint pointer the authorization owns. */
  readonly fp?: string;
}

export type RingEntry =
  | { readonly attribute: string; readonly seq: number; readonly kind: 'pending' }
  | { readonly attribute: string; readonly seq: number; readonly kind: 'live'; readonly token: RingToken };

/**
 * The entries of one scope set on a grant item, newest first (ties, which only a token moved from
 * another set can make, by name, so that every reader orders them alike). A pending entry's set
 * is the one its name says; a live entry's, its `scopes` (a token's scopes can change).
 */
export function entriesOf(item: Record<string, unknown> | undefined, setKey: string): RingEntry[] {
  if (!item) return [];
  const prefix = `${ENTRY_PREFIX}${setKey}#`;
  const entries: RingEntry[] = [];
  for (const [attribute, value] of Object.entries(item)) {
    if (!attribute.startsWith(ENTRY_PREFIX)) continue;
    if (typeof value === 'number') {
      if (attribute.startsWith(prefix)) entries.push({ attribute, seq: value, kind: 'pending' });
    } else if (value && typeof value === 'object') {
      const token = toRingToken(value as Record<string, unknown>);
      if (scopeSetKey(token.scopes) === setKey)
        entries.push({ attribute, seq: token.seq, kind: 'live', token });
    }
  }
  return entries.sort((a, b) => b.seq - a.seq || (a.attribute < b.attribute ? -1 : 1));
}

const toRingToken = (value: Record<string, unknown>): RingToken => ({
  seq: Number(value.seq),
  id: Number(value.id),
  hash: String(value.hash),
  scopes: (value.scopes as Scope[] | undefined) ?? [],
  ...(typeof value.fp === 'string' ? { fp: value.fp } : {}),
});

/** Every committed token on a grant item, whatever its scope set. */
export function liveTokensOf(item: Record<string, unknown> | undefined): RingToken[] {
  if (!item) return [];
  return Object.entries(item)
    .filter(([attribute, value]) => attribute.startsWith(ENTRY_PREFIX) && value && typeof value === 'object')
    .map(([, value]) => toRingToken(value as Record<string, unknown>));
}

/** The names of every entry on a grant item, live or pending. */
export const entryAttributes = (item: Record<string, unknown> | undefined): string[] =>
  Object.keys(item ?? {}).filter((attribute) => attribute.startsWith(ENTRY_PREFIX));

/**
 * What one more token in a scope set revokes under a limit of `limit` tokens per set, on the grant
 * item as the creation's registration returned it: the entry at rank `limit + 1` (newest first) of
 * the set's entries (its own included), as `limitVictim` settles it for a creation that adds its
 * token. A pending victim is a creation still under way: removing its entry makes its commit fail.
 */
export const victimOf = (
  item: Record<string, unknown> | undefined,
  setKey: string,
  limit: number,
  self: string,
): RingEntry | undefined => limitVictim(entriesOf(item, setKey)[limit], item, setKey, limit, 'adds', self);

/**
 * The victim a creation takes, on the grant item as last seen, given the one its rank named
 * (`ranked`, as it is on that item now: undefined once gone):
 * - `adds` (it commits its token): the ranked entry, committed (the count stays) or pending (it is
 *   superseded, and owes the limit what it would have revoked); without one, nothing while the
 *   live count leaves room, else a committed token.
 * - `owes` (it was superseded, whether its exchange then succeeds or fails): nothing unless the
 *   live count is over the limit, else its ranked entry when committed, or a committed token.
 *
 * The rank is only a prediction that spreads concurrent creations over distinct victims: a
 * pending entry may belong to an exchange that fails (its code spent by another, its grant
 * revoked) and revokes nothing. The count decides (the commit is conditioned on it).
 */
export function limitVictim(
  ranked: RingEntry | undefined,
  item: Record<string, unknown> | undefined,
  setKey: string,
  limit: number,
  role: 'adds' | 'owes',
  /** The creation's own entry (its rank names no one else's victim). */
  self?: string,
): RingEntry | undefined {
  const count = liveCountOf(item, setKey);
  if (role === 'adds')
    return ranked ?? (count < limit ? undefined : unclaimedLive(item, setKey, limit, self));
  if (count <= limit) return undefined;
  return ranked?.kind === 'live' ? ranked : unclaimedLive(item, setKey, limit, self);
}

/**
 * The oldest committed token that no pending entry's rank names (those are other creations'
 * victims: taking one would cancel that creation's commit), or the oldest committed one.
 */
function unclaimedLive(
  item: Record<string, unknown> | undefined,
  setKey: string,
  limit: number,
  self: string | undefined,
): RingEntry | undefined {
  const entries = entriesOf(item, setKey);
  const claimed = new Set(
    entries.flatMap((entry, index) =>
      entry.kind === 'pending' && entry.attribute !== self ? [entries[index + limit]?.attribute ?? ''] : [],
    ),
  );
  const live = entries.filter((entry) => entry.kind === 'live');
  return live.findLast((entry) => !claimed.has(entry.attribute)) ?? live.at(-1);
}

// Request builders: pure, so unit tests can read them as plain objects.

/**
 * Registers a token about to be created: takes the scope set's next issue number and writes the
 * pending entry with it, in one unconditional UpdateItem that returns the whole grant item (the
 * entries `victimOf` decides on, the grant's identity when it has one).
 */
export function registerRequest(
  login: string,
  clientId: string,
  scopes: readonly Scope[],
  tokenHash: string,
  timestamp: string,
): UpdateCommandInput {
  return {
    TableName: tableName(),
    Key: grantKey(login, clientId),
    UpdateExpression:
      'SET #seq = if_not_exists(#seq, :zero) + :one, #mine = if_not_exists(#seq, :zero) + :one, #type = :type, #clientId = :clientId, #updatedAt = :now ADD #ver :one',
    ExpressionAttributeNames: {
      '#seq': seqAttribute(scopes),
      '#mine': entryAttribute(scopes, tokenHash),
      '#type': TABLE.typeAttribute,
      '#clientId': 'clientId',
      '#updatedAt': 'updatedAt',
      '#ver': RING_VERSION,
    },
    ExpressionAttributeValues: {
      ':zero': 0,
      ':one': 1,
      ':type': 'Grant',
      ':clientId': clientId,
      ':now': timestamp,
    },
    ReturnValues: 'ALL_NEW',
  };
}

/**
 * Drops an entry whatever it holds (a creation that did not happen takes its pending entry back),
 * returning the item as it was: when the entry was already gone, a newer creation superseded it.
 */
export function unregisterRequest(login: string, clientId: string, attribute: string): UpdateCommandInput {
  return {
    TableName: tableName(),
    Key: grantKey(login, clientId),
    UpdateExpression: 'REMOVE #entry',
    ConditionExpression: ITEM_EXISTS,
    ExpressionAttributeNames: { '#entry': attribute },
    ReturnValues: 'ALL_OLD',
  };
}

export const ringTokenValue = (token: RingToken): Record<string, unknown> => ({
  seq: token.seq,
  id: token.id,
  hash: token.hash,
  scopes: token.scopes,
  ...(token.fp ? { fp: token.fp } : {}),
});

/**
 * The grant item's part of a creation's transaction: the pending entry becomes the token (only
 * while it is still pending: a newer creation may have revoked it meanwhile), the grant gets its
 * identity if it has none, and the victim's entry goes (only while it is as it was seen). The
 * scope set's live count follows, and is conditioned on as `limitVictim` decides. The old item
 * comes back when a condition fails, so that the caller decides again without a read.
 */
export function commitEntry(input: {
  readonly login: string;
  readonly clientId: string;
  /** The scope set of the token and its victim. */
  readonly setKey: string;
  readonly mine?: { readonly attribute: string; readonly token: RingToken };
  readonly victim?: RingEntry;
  readonly limit?: number;
  readonly grantId?: number;
  readonly timestamp: string;
}): TransactItem {
  const attributeNames: Record<string, string> = { '#updatedAt': 'updatedAt' };
  const values: Record<string, unknown> = { ':now': input.timestamp };
  const set = ['#updatedAt = :now'];
  const conditions = [ITEM_EXISTS];
  if (input.mine) {
    attributeNames['#mine'] = input.mine.attribute;
    values[':mine'] = ringTokenValue(input.mine.token);
    values[':pending'] = 'N';
    set.push('#mine = :mine');
    conditions.push('attribute_type(#mine, :pending)');
  }
  if (input.grantId !== undefined) {
    attributeNames['#id'] = 'id';
    attributeNames['#createdAt'] = 'createdAt';
    values[':grantId'] = input.grantId;
    set.push('#id = if_not_exists(#id, :grantId)', '#createdAt = if_not_exists(#createdAt, :now)');
  }
  let remove = '';
  if (input.victim) {
    attributeNames['#victim'] = input.victim.attribute;
    values[':victimType'] = input.victim.kind === 'pending' ? 'N' : 'M';
    remove = ' REMOVE #victim';
    conditions.push('attribute_type(#victim, :victimType)');
    if (input.victim.kind === 'live') {
      // The victim's id and its current token hash: a reset or rotation since the ring was read
      // moved its lookup, and the deletion beside this must take the new one (see
      // deleteAuthorizationItems). And its scopes: a token moved to another scope set since
      // counts in that set.
      values[':victimId'] = input.victim.token.id;
      values[':victimHash'] = input.victim.token.hash;
      values[':victimScopes'] = input.victim.token.scopes;
      conditions.push(
        '#victim.#victimIdField = :victimId',
        '#victim.#victimHashField = :victimHash',
        '#victim.#victimScopesField = :victimScopes',
      );
      attributeNames['#victimIdField'] = 'id';
      attributeNames['#victimHashField'] = 'hash';
      attributeNames['#victimScopesField'] = 'scopes';
    }
  }
  let add = '';
  const change = (input.mine ? 1 : 0) - (input.victim?.kind === 'live' ? 1 : 0);
  if (change !== 0) {
    attributeNames['#live'] = liveCountAttribute(input.setKey);
    values[':change'] = change;
    add = ' ADD #live :change';
    // One more token with no victim: only below the limit. One more that supersedes a pending
    // creation: that creation owes the limit a revocation. A superseded creation's revocation:
    // only while the count is over the limit (see limitVictim).
    if (input.limit !== undefined && (change < 0 || !input.victim)) {
      values[':limit'] = input.limit;
      conditions.push(change > 0 ? '(attribute_not_exists(#live) OR #live < :limit)' : '#live > :limit');
    }
  }
  return {
    Update: {
      TableName: tableName(),
      Key: grantKey(input.login, input.clientId),
      UpdateExpression: `SET ${set.join(', ')}${remove}${add}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: attributeNames,
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * Changes fields of a live token's entry (its token was reset or rotated; its scopes or
 * fingerprint changed: a live entry's scope set is its `scopes`, whatever its name says, so a
 * change of scope set moves the token from one set's live count to the other's), only while it is
 * still there, and, for a reset or rotation, only while it still names the hash it replaces
 * (`replaces`). `fp: null` drops the fingerprint.
 */
export function patchEntry(
  login: string,
  clientId: string,
  attribute: string,
  fields: {
    readonly hash?: string;
    readonly scopes?: { readonly from: readonly Scope[]; readonly to: readonly Scope[] };
    readonly fp?: string | null;
  },
  replaces?: string,
): TransactItem {
  const attributeNames: Record<string, string> = { '#entry': attribute };
  const values: Record<string, unknown> = {};
  if (replaces !== undefined) {
    attributeNames['#hash'] = 'hash';
    values[':replaces'] = replaces;
  }
  const set: string[] = [];
  let remove = '';
  let add = '';
  const stored = { hash: fields.hash, scopes: fields.scopes?.to, fp: fields.fp };
  for (const field of ['hash', 'scopes', 'fp'] as const) {
    const value = stored[field];
    if (value === undefined) continue;
    attributeNames[`#${field}`] = field;
    if (value === null) remove = ` REMOVE #entry.#${field}`;
    else {
      values[`:${field}`] = value;
      set.push(`#entry.#${field} = :${field}`);
    }
  }
  if (fields.scopes) {
    const from = scopeSetKey(fields.scopes.from);
    const to = scopeSetKey(fields.scopes.to);
    if (from !== to) {
      attributeNames['#liveFrom'] = liveCountAttribute(from);
      attributeNames['#liveTo'] = liveCountAttribute(to);
      values[':leave'] = -1;
      values[':join'] = 1;
      add = ' ADD #liveFrom :leave, #liveTo :join';
    }
  }
  return {
    Update: {
      TableName: tableName(),
      Key: grantKey(login, clientId),
      UpdateExpression: `${set.length > 0 ? `SET ${set.join(', ')}` : ''}${remove}${add}`.trim(),
      ConditionExpression:
        replaces === undefined
          ? 'attribute_exists(#entry)'
          : 'attribute_exists(#entry) AND #entry.#hash = :replaces',
      ExpressionAttributeNames: attributeNames,
      ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
    },
  };
}
