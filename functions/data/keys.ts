/**
 * Every partition and sort key of the table is built here and nowhere else. Upper-case entity
 * prefixes, `#` separators; logins and repository names are lower-cased (ASCII letters only, see
 * `domain/ascii-case.ts`) because GitHub treats them case-insensitively. Each builder names the access pattern it serves (see
 * docs/data-model.md for the full table).
 */

import { foldAsciiCase } from '#domain/ascii-case';
import type { FailureCounter } from '#domain/login-limits';

export interface Key {
  readonly PK: string;
  readonly SK: string;
}

export interface Gsi1Key {
  readonly GSI1PK: string;
  readonly GSI1SK: string;
}

const lower = foldAsciiCase;

/** Zero-padded so that string order is numeric order (ids are allocated by counters). */
export const sortableId = (id: number): string => String(id).padStart(12, '0');

/** User partition: profile, credential, authorizations, grants and SSH keys of one user. */
export const userPartition = (login: string): string => `USER#${lower(login)}`;

/** User by login (GetItem), and with the credential in one Query of the user partition. */
export const userProfileKey = (login: string): Key => ({ PK: userPartition(login), SK: 'PROFILE' });

/** Password hash and TOTP secret; also the item whose existence makes a login unique. */
export const credentialKey = (login: string): Key => ({ PK: userPartition(login), SK: 'CREDENTIAL' });

/** User by numeric id (GSI1). */
export const userIdIndexKey = (id: number): Gsi1Key => ({ GSI1PK: `USERID#${id}`, GSI1SK: 'USER' });

/** OAuth application by client_id (GetItem). */
export const appKey = (clientId: string): Key => ({ PK: `APP#${clientId}`, SK: 'APP' });

/**
 * Suspension state of the applications whose tag (`domain/app-tag.ts`) is `tag`: read with an app
 * token's lookup in one strongly consistent BatchGetItem, since the token carries the tag. Written
 * in the transaction of every write of an application's existence or suspension.
 */
export const appStateKey = (tag: string): Key => ({ PK: `APPSTATE#${tag}`, SK: 'APPSTATE' });

/** Applications a user owns, by client_id (GSI1, begins_with `APP#`). */
export const appOwnerIndexKey = (ownerLogin: string, clientId: string): Gsi1Key => ({
  GSI1PK: `OWNER#${lower(ownerLogin)}`,
  GSI1SK: `APP#${clientId}`,
});

/** Repository by owner and name (GetItem); its import, authors and large files share the partition. */
export const repoPartition = (owner: string, name: string): string => `REPO#${lower(owner)}/${lower(name)}`;
export const repoKey = (owner: string, name: string): Key => ({ PK: repoPartition(owner, name), SK: 'REPO' });

/** Repositories a user owns, by name (GSI1, begins_with `REPO#`). */
export const repoOwnerIndexKey = (ownerLogin: string, name: string): Gsi1Key => ({
  GSI1PK: `OWNER#${lower(ownerLogin)}`,
  GSI1SK: `REPO#${lower(name)}`,
});

/** The GSI1 sort keys of a user's repositories whose names come after `after`: a BETWEEN range. */
export const repoOwnerIndexAfter = (after: string): { readonly from: string; readonly to: string } => ({
  // The key of `after` with one more character sorts just after it; `REPO$` after every `REPO#…`.
  from: `REPO#${lower(after)}\u0000`,
  to: 'REPO$',
});

/*
 * A repository's import shares the repository partition: the import item, and its authors and
 * large files under `IMPORT#<importId>#`, so that a cancelled import's leftovers never show in the
 * next import (each import has its own never-reused id).
 */

/** The import of a repository (GetItem; at most one). */
export const importKey = (owner: string, name: string): Key => ({
  PK: repoPartition(owner, name),
  SK: 'IMPORT',
});

/** The prefix of everything belonging to one import (its authors, their pointers, its large files). */
export const importItemsPrefix = (importId: number): string => `IMPORT#${sortableId(importId)}#`;

/** An author of an import by id, and the import's authors in id order (begins_with `…#AUTHOR#`, `since`). */
export const importAuthorKey = (owner: string, name: string, importId: number, authorId: number): Key => ({
  PK: repoPartition(owner, name),
  SK: `${importItemsPrefix(importId)}AUTHOR#${sortableId(authorId)}`,
});

/** One author per origin identity: a pointer by the hash of the remote id (conditional put). */
export const importAuthorRemoteKey = (
  owner: string,
  name: string,
  importId: number,
  remoteIdHash: string,
): Key => ({
  PK: repoPartition(owner, name),
  SK: `${importItemsPrefix(importId)}REMOTE#${remoteIdHash}`,
});

/** The large files an import found (one item, written once per scan). */
export const importLargeFilesKey = (owner: string, name: string, importId: number): Key => ({
  PK: repoPartition(owner, name),
  SK: `${importItemsPrefix(importId)}LARGEFILES`,
});

/**
 * The revision map of an import (`domain/revision-map.ts`): the header names the generation (the
 * attempt that published it), its total and its bucket count; each generation's pages (origin
 * order, GetItem/BatchGetItem by number) and lookup buckets (GetItem by hash) sit beneath it.
 */
export const importRevisionMapKey = (owner: string, name: string, importId: number): Key => ({
  PK: repoPartition(owner, name),
  SK: `${importItemsPrefix(importId)}REVMAP`,
});
export const importRevisionPageKey = (
  owner: string,
  name: string,
  importId: number,
  generation: number,
  page: number,
): Key => ({
  PK: repoPartition(owner, name),
  SK: `${importItemsPrefix(importId)}REVMAP#${sortableId(generation)}#PAGE#${sortableId(page)}`,
});
export const importRevisionBucketKey = (
  owner: string,
  name: string,
  importId: number,
  generation: number,
  bucket: number,
): Key => ({
  PK: repoPartition(owner, name),
  SK: `${importItemsPrefix(importId)}REVMAP#${sortableId(generation)}#FIND#${sortableId(bucket)}`,
});

/** What an import's raw step could not carry over as it was (one item, written when the step ends). */
export const importReportKey = (owner: string, name: string, importId: number): Key => ({
  PK: repoPartition(owner, name),
  SK: `${importItemsPrefix(importId)}REPORT`,
});

/** Whether and how an import follows its origin after `complete` (one item; absent: `off`). */
export const importSyncKey = (owner: string, name: string, importId: number): Key => ({
  PK: repoPartition(owner, name),
  SK: `${importItemsPrefix(importId)}SYNC`,
});

/**
 * Syncs that are due (GSI1, sparse: only a following import with an interval carries it), spread
 * over `SYNC_DUE_SHARDS` partitions by repository so no one partition takes every write. The sort
 * key starts with the due time (`next_sync_at`, ISO 8601 in UTC): the scheduler reads each shard
 * with `GSI1SK <= <now>~`.
 */
export const SYNC_DUE_SHARDS = 4;
export const syncDuePartition = (shard: number): string => `SYNCDUE#${shard}`;
export const syncDueIndexKey = (owner: string, name: string, importId: number, dueAt: string): Gsi1Key => ({
  GSI1PK: syncDuePartition(fnv1a(repoPartition(owner, name)) % SYNC_DUE_SHARDS),
  GSI1SK: `${dueAt}#${lower(owner)}/${lower(name)}#${sortableId(importId)}`,
});

/** FNV-1a (32 bits): a stable, evenly spread shard for a string. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/*
 * Import batches (issue 37) live in their owner's partition: the batch item under `IMPORTBATCH#`
 * (a user's batches: one Query, newest first), its entries under `BATCHENTRY#<batch>#` (a batch's
 * entries: one Query, in request order).
 */

/** A batch by id, and a user's batches (begins_with `IMPORTBATCH#`, descending: newest first). */
export const IMPORT_BATCH_PREFIX = 'IMPORTBATCH#';
export const importBatchKey = (login: string, id: number): Key => ({
  PK: userPartition(login),
  SK: `${IMPORT_BATCH_PREFIX}${sortableId(id)}`,
});

/** A batch's entries in request order (begins_with), and one entry by index. */
export const batchEntriesPrefix = (batchId: number): string => `BATCHENTRY#${sortableId(batchId)}#`;
export const batchEntryKey = (login: string, batchId: number, index: number): Key => ({
  PK: userPartition(login),
  SK: `${batchEntriesPrefix(batchId)}${sortableId(index)}`,
});

/**
 * Batches whose queue still moves (GSI1, sparse: a batch carries it while entries are queued or
 * hold a slot): the scheduler's safety net reads the one partition.
 */
export const BATCH_QUEUE_PARTITION = 'BATCHQUEUE';
export const batchQueueIndexKey = (login: string, batchId: number): Gsi1Key => ({
  GSI1PK: BATCH_QUEUE_PARTITION,
  GSI1SK: `${lower(login)}#${sortableId(batchId)}`,
});

/** Atomic id counter per entity kind (UpdateItem ADD); ids are never reused. */
export const counterKey = (entity: string): Key => ({ PK: `COUNTER#${entity}`, SK: 'COUNTER' });

/*
 * Authorization items share the prefix `AUTH` inside the user partition, so that one Query
 * (`begins_with(SK, 'AUTH')`) reads a user's authorizations, their uniqueness pointers and grants.
 */

/** Authorization by id, and the user's authorizations in id order (begins_with `AUTH#`). */
export const authorizationKey = (login: string, id: number): Key => ({
  PK: userPartition(login),
  SK: `AUTH#${sortableId(id)}`,
});

/** The prefix shared by every authorization-related item of a user (one Query reads them all). */
export const AUTH_ITEMS_PREFIX = 'AUTH';

/** Tokens an application holds, across users (GSI1). */
export const appAuthorizationIndexKey = (clientId: string, login: string, id: number): Gsi1Key => ({
  GSI1PK: `APPAUTH#${clientId}`,
  GSI1SK: `USER#${lower(login)}#${sortableId(id)}`,
});

/** Unique note of a personal access token, per user. */
export const notePointerKey = (login: string, noteHash: string): Key => ({
  PK: userPartition(login),
  SK: `AUTHNOTE#${noteHash}`,
});

/** The authorization get-or-create returns for user + application + fingerprint (may be empty). */
export const fingerprintPointerKey = (login: string, clientId: string, fingerprint: string): Key => ({
  PK: userPartition(login),
  SK: `AUTHFP#${clientId}#${fingerprint}`,
});

/** Grant of a user for an application. */
export const grantKey = (login: string, clientId: string): Key => ({
  PK: userPartition(login),
  SK: `AUTHGRANT#${clientId}`,
});

/**
 * Revocation generation of a user's grant for an application: raised by every grant revocation
 * and never deleted, so codes issued (and tokens being minted) before a revocation can be told
 * from those after it.
 */
export const grantGenerationKey = (login: string, clientId: string): Key => ({
  PK: userPartition(login),
  SK: `AUTHGEN#${clientId}`,
});

/** Token → user, authorization and scopes, by the token's SHA-256 (strongly consistent GetItem). */
export const tokenKey = (tokenHash: string): Key => ({ PK: `TOKEN#${tokenHash}`, SK: 'TOKEN' });

/**
 * Failed password attempts of a login in one fixed time window (TTL'd), one counter per kind of
 * attempt (`FailureCounter`: passwords, and client-secret-shaped passwords counted apart).
 */
export const failedLoginKey = (login: string, window: number, counter: FailureCounter = 'password'): Key => ({
  PK: userPartition(login),
  SK: `${counter === 'password' ? 'LOGINFAIL' : 'CLIENTFAIL'}#${window}`,
});

/** A user's SSH key by id, and the user's SSH keys in id order (begins_with `KEY#`). */
export const USER_KEY_PREFIX = 'KEY#';
export const userKeyKey = (login: string, id: number): Key => ({
  PK: userPartition(login),
  SK: `${USER_KEY_PREFIX}${sortableId(id)}`,
});

/** A repository's deploy key by id, and the repository's deploy keys in id order (begins_with `DEPLOYKEY#`). */
export const DEPLOY_KEY_PREFIX = 'DEPLOYKEY#';
export const deployKeyKey = (owner: string, name: string, id: number): Key => ({
  PK: repoPartition(owner, name),
  SK: `${DEPLOY_KEY_PREFIX}${sortableId(id)}`,
});

/** A repository's webhook by id, and the repository's webhooks in id order (begins_with `HOOK#`). */
export const HOOK_PREFIX = 'HOOK#';
export const hookKey = (owner: string, name: string, id: number): Key => ({
  PK: repoPartition(owner, name),
  SK: `${HOOK_PREFIX}${sortableId(id)}`,
});

/** A hook's deliveries, newest first (begins_with, descending, a page from a delivery's key; TTL), and one delivery by id. */
export const hookDeliveriesPrefix = (hookId: number): string => `HOOKDELIVERY#${sortableId(hookId)}#`;
export const hookDeliveryKey = (owner: string, name: string, hookId: number, id: number): Key => ({
  PK: repoPartition(owner, name),
  SK: `${hookDeliveriesPrefix(hookId)}${sortableId(id)}`,
});

/** SSH and deploy keys an application's tokens created for a user, deleted with the user's grant (GSI1). */
export const appKeysIndexPartition = (login: string, clientId: string): string =>
  `APPKEYS#${lower(login)}#${clientId}`;
export const appUserKeyIndexKey = (login: string, clientId: string, id: number): Gsi1Key => ({
  GSI1PK: appKeysIndexPartition(login, clientId),
  GSI1SK: `${USER_KEY_PREFIX}${sortableId(id)}`,
});
export const appDeployKeyIndexKey = (login: string, clientId: string, id: number): Gsi1Key => ({
  GSI1PK: appKeysIndexPartition(login, clientId),
  GSI1SK: `${DEPLOY_KEY_PREFIX}${sortableId(id)}`,
});

/** A public key's fingerprint, registered once on the whole service (conditional put with the key). */
export const sshKeyFingerprintKey = (fingerprint: string): Key => ({
  PK: `SSHKEY#${fingerprint}`,
  SK: 'SSHKEY',
});

/** Browser session by the SHA-256 of its cookie value (GetItem; TTL). */
export const sessionKey = (idHash: string): Key => ({ PK: `SESSION#${idHash}`, SK: 'SESSION' });

/** OAuth authorization code by the SHA-256 of the code (strong GetItem; single-use conditional updates; TTL). */
export const codeKey = (codeHash: string): Key => ({ PK: `CODE#${codeHash}`, SK: 'CODE' });

/**
 * Refresh token by the SHA-256 of the token (strong GetItem; single use: conditional update; TTL
 * at its expiry). Its authorization holds the hash of the family's current refresh token.
 */
export const refreshTokenKey = (tokenHash: string): Key => ({ PK: `REFRESH#${tokenHash}`, SK: 'REFRESH' });
/** Device authorization (RFC 8628) by the SHA-256 of its device code (polls: one GetItem; TTL). */
export const deviceCodeKey = (deviceCodeHash: string): Key => ({
  PK: `DEVICE#${deviceCodeHash}`,
  SK: 'DEVICE',
});

/** Pointer from the SHA-256 of a user code to its device authorization (the device page; TTL). */
export const userCodeKey = (userCodeHash: string): Key => ({
  PK: `USERCODE#${userCodeHash}`,
  SK: 'USERCODE',
});

/** Wrong user-code entries of a user in one fixed window (conditional ADD; TTL). */
export const deviceEntryKey = (login: string, window: number): Key => ({
  PK: userPartition(login),
  SK: `DEVICEENTRY#${window}`,
});

/** Redeliveries by hand of one hook in one fixed window (conditional ADD below the limit; TTL). */
export const hookRedeliveryWindowKey = (
  owner: string,
  name: string,
  hookId: number,
  window: number,
): Key => ({
  PK: repoPartition(owner, name),
  SK: `HOOKREDELIVERIES#${sortableId(hookId)}#${window}`,
});

/**
 * Credential reports (`POST /credentials/revoke`) from one caller's address in one fixed window
 * (conditional ADD below the limit; TTL).
 */
export const credentialReportWindowKey = (address: string, window: number): Key => ({
  PK: `CREDREPORT#${address}`,
  SK: `WINDOW#${window}`,
});

/**
 * Dynamic client registrations (`POST /login/oauth/register`) from one caller's address in one
 * fixed window (conditional ADD below the limit; TTL).
 */
export const clientRegistrationWindowKey = (address: string, window: number): Key => ({
  PK: `CLIENTREG#${address}`,
  SK: `WINDOW#${window}`,
});

/** Client metadata documents fetched for one caller's address in one fixed window (conditional ADD; TTL). */
export const clientDocumentFetchWindowKey = (address: string, window: number): Key => ({
  PK: `CLIENTDOC#${address}`,
  SK: `WINDOW#${window}`,
});

/** A service-wide setting an administrator switches (`npm run admin -- oauth …`). */
export const serviceSettingKey = (name: string): Key => ({ PK: `SETTING#${name}`, SK: 'SETTING' });

/**
 * A notice to a user that a reported credential of theirs was revoked, newest first (begins_with
 * `REVOKED#`, descending; TTL). Written in the transaction that deletes the authorization.
 */
export const REVOCATION_NOTICE_PREFIX = 'REVOKED#';
export const revocationNoticeKey = (login: string, revokedAt: string, authorizationId: number): Key => ({
  PK: userPartition(login),
  SK: `${REVOCATION_NOTICE_PREFIX}${revokedAt}#${sortableId(authorizationId)}`,
});

/*
 * A person's security log (issue 38) lives in their partition: each event under `SECLOG#`, its
 * sort key the event's time then its id (one Query, newest first), and beside it a marker under
 * `SECLOGID#` by the event's id alone, put in the same transaction when the event is recorded
 * after what it records, so the same event recorded again (a retry, whenever it runs) adds nothing.
 */

/** A user's security events, newest first (begins_with `SECLOG#`, descending; TTL 90 days). */
export const SECURITY_EVENT_PREFIX = 'SECLOG#';
export const securityEventKey = (login: string, createdAt: string, eventId: string): Key => ({
  PK: userPartition(login),
  SK: `${SECURITY_EVENT_PREFIX}${createdAt}#${eventId}`,
});

/** One security event by id, whatever its time (conditional put: an event is recorded once). */
export const securityEventIdKey = (login: string, eventId: string): Key => ({
  PK: userPartition(login),
  SK: `SECLOGID#${eventId}`,
});

/*
 * The access patterns, written with the builders above so that the table in docs/data-model.md (generated by
 * `npm run docs` from this list) shows the keys the code really builds. Strings in angle brackets
 * are placeholders; ids are shown as the example id 42. A unit test fails when a builder above is
 * missing here.
 */

export type Read =
  | { readonly get: Key | Gsi1Key }
  | { readonly batchGet: readonly Key[] }
  | { readonly query: Key | Gsi1Key; readonly by: 'partition' | 'prefix' | 'key' }
  | { readonly update: Key }
  | { readonly write: readonly Key[] };

export interface AccessPattern {
  readonly pattern: string;
  readonly index: 'table' | 'GSI1';
  readonly read: Read;
  /** Strongly consistent read. */
  readonly strong?: boolean;
  readonly note?: string;
}

const L = '<login>';
const C = '<client_id>';
const H = '<hash>';
const ID = 42;

// biome-ignore format: one line per pattern keeps the list readable
export const ACCESS_PATTERNS: readonly AccessPattern[] = [
  { pattern: 'User by login', index: 'table', read: { get: userProfileKey(L) } },
  { pattern: 'User, credential and failed-login windows (password sign-in), one round trip', index: 'table', read: { batchGet: [userProfileKey(L), credentialKey(L), failedLoginKey(L, ID), failedLoginKey(L, ID - 1)] }, strong: true, note: `or the client-secret counter ${failedLoginKey(L, ID, 'client-secret').SK} for a client-secret-shaped password` },
  { pattern: 'User by id', index: 'GSI1', read: { query: userIdIndexKey(ID), by: 'key' } },
  { pattern: 'Application by client_id', index: 'table', read: { get: appKey(C) }, strong: true },
  { pattern: 'Applications a user owns', index: 'GSI1', read: { query: appOwnerIndexKey(L, ''), by: 'prefix' } },
  { pattern: 'Token → user, authorization, scopes (a revoked token fails at once)', index: 'table', read: { get: tokenKey(H) }, strong: true },
  { pattern: 'OAuth app token → its lookup and its application\'s suspension state (stopped at once by a suspension), one round trip', index: 'table', read: { batchGet: [tokenKey(H), appStateKey('<tag>')] }, strong: true, note: '`<tag>`: the 6 characters after `gho_`; a token or application from before tags falls back to GetItem of the application' },
  { pattern: 'Application and the token it acts on (app-side token endpoints), one round trip', index: 'table', read: { batchGet: [appKey(C), tokenKey(H)] }, strong: true },
  { pattern: 'Authorization by id', index: 'table', read: { get: authorizationKey(L, ID) }, strong: true },
  { pattern: 'Authorizations, note and fingerprint pointers and grants of a user (lists, get-or-create, grants, deletes)', index: 'table', read: { query: { PK: userPartition(L), SK: AUTH_ITEMS_PREFIX }, by: 'prefix' }, strong: true, note: `items ${notePointerKey(L, H).SK}, ${fingerprintPointerKey(L, C, '<fingerprint>').SK}, ${grantKey(L, C).SK}, ${grantGenerationKey(L, C).SK} share the prefix` },
  { pattern: 'Grant generation of a user for an application (device flow approval)', index: 'table', read: { get: grantGenerationKey(L, C) }, strong: true },
  { pattern: 'User, application, grant (its token ring: the scopes already granted) and grant generation (the authorize page and its consent form), one round trip', index: 'table', read: { batchGet: [userProfileKey(L), appKey(C), grantKey(L, C), grantGenerationKey(L, C)] }, strong: true },
  { pattern: "Grant's token ring (creating an application token: registers it and returns the ring, which names the token the limit revokes)", index: 'table', read: { update: grantKey(L, C) }, note: 'unconditional SET of the issue counter and the pending entry, ReturnValues ALL_NEW' },
  { pattern: 'Tokens an application holds (developer settings)', index: 'GSI1', read: { query: appAuthorizationIndexKey(C, L, ID), by: 'partition' } },
  { pattern: 'SSH keys of a user; key by id', index: 'table', read: { query: { PK: userPartition(L), SK: USER_KEY_PREFIX }, by: 'prefix' }, strong: true, note: `GetItem ${userKeyKey(L, ID).SK}` },
  { pattern: 'Deploy keys of a repository; deploy key by id', index: 'table', read: { query: { PK: repoPartition(L, '<repo>'), SK: DEPLOY_KEY_PREFIX }, by: 'prefix' }, strong: true, note: `GetItem ${deployKeyKey(L, '<repo>', ID).SK}` },
  { pattern: 'Webhooks of a repository (an event finds its hooks); webhook by id', index: 'table', read: { query: { PK: repoPartition(L, '<repo>'), SK: HOOK_PREFIX }, by: 'prefix' }, strong: true, note: `GetItem ${hookKey(L, '<repo>', ID).SK}` },
  { pattern: 'Deliveries of a webhook, newest first, one page per request (the cursor names a delivery: its key is the ExclusiveStartKey); delivery by id; all of them when the hook is deleted', index: 'table', read: { query: { PK: repoPartition(L, '<repo>'), SK: hookDeliveriesPrefix(ID) }, by: 'prefix' }, strong: true, note: `descending, ascending for a previous page; GetItem ${hookDeliveryKey(L, '<repo>', ID, ID).SK}; keys only, then BatchWriteItem deletes; TTL after 3 days` },
  { pattern: 'Keys an application created for a user (grant revocation)', index: 'GSI1', read: { query: { GSI1PK: appKeysIndexPartition(L, C), GSI1SK: '' }, by: 'partition' }, note: `sort keys ${appUserKeyIndexKey(L, C, ID).GSI1SK}, ${appDeployKeyIndexKey(L, C, ID).GSI1SK}` },
  { pattern: 'A public key registered once on the whole service', index: 'table', read: { write: [sshKeyFingerprintKey('<fingerprint>')] }, note: 'conditional put in the key\'s transaction' },
  { pattern: 'Application and an authorization code by its hash (the exchange), one round trip; single use: conditional update in the transaction that stores the token', index: 'table', read: { batchGet: [appKey(C), codeKey(H)] }, strong: true },
  { pattern: 'Application and a refresh token (refresh, revocation), one round trip; the token alone when a rotation retries (single use: conditional update in the rotation transaction)', index: 'table', read: { batchGet: [appKey(C), refreshTokenKey(H)] }, strong: true },
  { pattern: 'Device authorization by device code hash (a poll; slow_down then grows the interval with a conditional UpdateItem)', index: 'table', read: { get: deviceCodeKey(H) }, strong: true, note: `written with the pointer ${userCodeKey(H).PK} in one transaction` },
  { pattern: 'Device authorization by user code (device page)', index: 'table', read: { get: userCodeKey(H) }, strong: true, note: 'then GetItem of the device authorization it names' },
  { pattern: 'Wrong user-code entries of a user in a window (device page lock)', index: 'table', read: { update: deviceEntryKey(L, ID) }, note: 'conditional ADD below the limit' },
  { pattern: 'Reported credentials (credential revocation): token lookups and refresh tokens by hash, 100 a round trip', index: 'table', read: { batchGet: [tokenKey(H), refreshTokenKey(H)] }, strong: true, note: 'up to 1,000 credentials: 10 BatchGetItem calls at most, sent together' },
  { pattern: 'Redeliveries by hand of a webhook in a window and the one before (redelivery rate limit)', index: 'table', read: { get: hookRedeliveryWindowKey(L, '<repo>', ID, ID - 1) }, strong: true, note: `then a conditional ADD below what the previous window leaves on ${hookRedeliveryWindowKey(L, '<repo>', ID, ID).SK}` },
  { pattern: 'Credential reports of a caller in a window (credential revocation rate limit)', index: 'table', read: { update: credentialReportWindowKey('<address>', ID) }, note: 'conditional ADD below the limit' },
  { pattern: 'Security log of a user, newest first, one page per request (the cursor names an event: its key is the ExclusiveStartKey)', index: 'table', read: { query: { PK: userPartition(L), SK: SECURITY_EVENT_PREFIX }, by: 'prefix' }, note: `descending; each event ${securityEventKey(L, '<created_at>', '<event_id>').SK} is put with its marker ${securityEventIdKey(L, '<event_id>').SK} (or in the transaction of what it records); TTL after 90 days` },
  { pattern: 'Dynamic client registrations of a caller in a window (registration rate limit)', index: 'table', read: { update: clientRegistrationWindowKey('<address>', ID) }, note: 'conditional ADD below the limit' },
  { pattern: 'Client metadata documents fetched for a caller in a window (document fetch rate limit)', index: 'table', read: { update: clientDocumentFetchWindowKey('<address>', ID) }, note: 'conditional ADD below the limit' },
  { pattern: 'A service-wide setting (dynamic client registration on or off)', index: 'table', read: { get: serviceSettingKey('<name>') } },
  { pattern: 'Revocation notices of a user, newest first (settings page)', index: 'table', read: { query: { PK: userPartition(L), SK: REVOCATION_NOTICE_PREFIX }, by: 'prefix' }, note: `put with the deletion of the authorization: ${revocationNoticeKey(L, '<revoked_at>', ID).SK}` },
  { pattern: 'Session by cookie', index: 'table', read: { get: sessionKey(H) } },
  { pattern: 'Repository by owner and name', index: 'table', read: { get: repoKey(L, '<repo>') } },
  { pattern: 'Repositories of a user (the home page, 100 a page)', index: 'GSI1', read: { query: repoOwnerIndexKey(L, ''), by: 'prefix' }, note: `a later page: GSI1SK BETWEEN ${JSON.stringify(repoOwnerIndexAfter('<after>').from)} AND ${repoOwnerIndexAfter('<after>').to}` },
  { pattern: 'Imports of a page of repositories, then their sync items (the home page)', index: 'table', read: { batchGet: [importKey(L, '<repo>'), importSyncKey(L, '<repo>', ID)] }, note: 'eventually consistent, 100 keys a call side by side: the imports first, then the sync items of those found' },
  { pattern: 'Import of a repository (API reads, worker progress writes conditional on the attempt)', index: 'table', read: { get: importKey(L, '<repo>') }, strong: true },
  { pattern: 'Authors of an import, in id order (`since`); author by id', index: 'table', read: { query: { PK: repoPartition(L, '<repo>'), SK: `${importItemsPrefix(ID)}AUTHOR#` }, by: 'prefix' }, strong: true, note: `GetItem ${importAuthorKey(L, '<repo>', ID, ID).SK}; one author per origin identity: conditional put of ${importAuthorRemoteKey(L, '<repo>', ID, H).SK}` },
  { pattern: 'Large files an import found', index: 'table', read: { get: importLargeFilesKey(L, '<repo>', ID) }, strong: true },
  { pattern: 'Report of an import (renamed refs; its large files are the item above)', index: 'table', read: { get: importReportKey(L, '<repo>', ID) }, strong: true },
  { pattern: "Finding counts and revision-map sizes of a batch's imports (the batch dashboard)", index: 'table', read: { batchGet: [importReportKey(L, '<repo>', ID), importRevisionMapKey(L, '<repo>', ID)] }, strong: true, note: 'projected to the counts and the total; 100 keys a call, the calls sent together (200 imports: four calls)' },
  { pattern: 'Revision map of an import: a page in origin order; one origin revision', index: 'table', read: { get: importRevisionMapKey(L, '<repo>', ID) }, strong: true, note: `then BatchGetItem ${importRevisionPageKey(L, '<repo>', ID, ID, ID).SK} (one or two pages), or, for one origin revision, the header's tail (a sync's newest, at most 100) then GetItem ${importRevisionBucketKey(L, '<repo>', ID, ID, ID).SK}` },
  { pattern: 'Following of an import (sync resource; the Git front end reads it before a push)', index: 'table', read: { get: importSyncKey(L, '<repo>', ID) }, strong: true, note: 'put conditional on the import being complete; cut-over conditional on following' },
  { pattern: 'Syncs that are due (the scheduler, once a minute)', index: 'GSI1', read: { query: { GSI1PK: syncDuePartition(0), GSI1SK: '' }, by: 'partition' }, note: `each of the ${SYNC_DUE_SHARDS} shards ${syncDuePartition(0)}…${syncDuePartition(SYNC_DUE_SHARDS - 1)} with GSI1SK <= <now>~ (sort keys ${syncDueIndexKey(L, '<repo>', ID, '<next_sync_at>').GSI1SK}); only following imports with an interval carry it` },
  { pattern: 'Everything filed under an import (cancel deletes its authors, pointers, large files and report)', index: 'table', read: { query: { PK: repoPartition(L, '<repo>'), SK: importItemsPrefix(ID) }, by: 'prefix' }, strong: true, note: 'keys only, then BatchWriteItem deletes' },
  { pattern: 'Import batches of a user, newest first; batch by id (conditional updates of its running and queued counts take a slot)', index: 'table', read: { query: { PK: userPartition(L), SK: IMPORT_BATCH_PREFIX }, by: 'prefix' }, strong: true, note: `descending; GetItem ${importBatchKey(L, ID).SK}` },
  { pattern: 'Entries of an import batch, in request order; entry by index', index: 'table', read: { query: { PK: userPartition(L), SK: batchEntriesPrefix(ID) }, by: 'prefix' }, strong: true, note: `GetItem ${batchEntryKey(L, ID, ID).SK}; written with their repositories in transactions of 45 entries` },
  { pattern: 'Import batches whose queue still moves (the scheduler, once a minute)', index: 'GSI1', read: { query: batchQueueIndexKey(L, ID), by: 'partition' }, note: 'sparse: only batches with queued entries or held slots carry it' },
  { pattern: 'Next id of a kind (authorization ids: a block of ten per process)', index: 'table', read: { update: counterKey('<kind>') }, note: 'ADD 1, or ADD 10 for a block, returns the new value' },
];
