import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { foldAsciiCase } from '#domain/ascii-case';
import type { FailureCounter } from '#domain/login-limits';
import type { Profile, User, UserStats } from '#domain/users';
import { conditionalWrite, db, getItems, itemOf, now, type TransactItem, tableName } from './client.ts';
import { nextId } from './counters.ts';
import { credentialKey, failedLoginKey, userIdIndexKey, userProfileKey } from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, TABLE, typed } from './table.ts';

export interface Credential {
  readonly passwordHash: string;
  /** The TOTP seed, sealed (`domain/sealed-secrets.ts`), when two-factor authentication is on; older items may hold it as plaintext base32. */
  readonly otpSecret?: string;
}

interface ProfileItem {
  id: number;
  login: string;
  name: string | null;
  email: string | null;
  publicEmail: boolean;
  siteAdmin: boolean;
  createdAt: string;
  updatedAt: string;
  /** Kept by the writes that change them (repository creation, two-factor), so a profile is one read. */
  publicRepos?: number;
  privateRepos?: number;
  twoFactor?: boolean;
}

const toStats = (item: Record<string, unknown>): UserStats => ({
  publicRepos: Number(item.publicRepos ?? 0),
  privateRepos: Number(item.privateRepos ?? 0),
  twoFactor: item.twoFactor === true,
});

const toProfile = (item: Record<string, unknown>): Profile => ({ user: toUser(item), stats: toStats(item) });

export const toUser = (item: Record<string, unknown>): User => {
  const { id, login, name, email, publicEmail, siteAdmin, createdAt, updatedAt } =
    item as unknown as ProfileItem;
  return {
    id,
    login,
    name: name ?? null,
    email: email ?? null,
    // Profiles written before the choice existed stay private.
    publicEmail: publicEmail === true,
    siteAdmin: Boolean(siteAdmin),
    createdAt,
    updatedAt,
  };
};

export interface NewUser {
  readonly login: string;
  readonly passwordHash: string;
  readonly email?: string | undefined;
  readonly name?: string | undefined;
  /** Show `email` on the public profile; private unless chosen. */
  readonly publicEmail?: boolean | undefined;
  readonly siteAdmin?: boolean | undefined;
}

/** Creates a user; `null` when the login is taken (case-insensitively). One transaction. */
export async function createUser(input: NewUser): Promise<User | null> {
  const id = await nextId('user');
  const timestamp = now();
  const profile: ProfileItem = {
    id,
    login: input.login,
    name: input.name ?? null,
    email: input.email ?? null,
    publicEmail: input.publicEmail ?? false,
    siteAdmin: input.siteAdmin ?? false,
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  const written = await conditionalWrite(
    db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...credentialKey(input.login),
                ...typed('Credential'),
                passwordHash: input.passwordHash,
                createdAt: timestamp,
                updatedAt: timestamp,
              },
              ConditionExpression: ITEM_ABSENT,
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: { ...userProfileKey(input.login), ...userIdIndexKey(id), ...typed('User'), ...profile },
              ConditionExpression: ITEM_ABSENT,
            },
          },
        ],
      }),
    ),
  );
  if (written === false) return null;
  return toUser(profile as unknown as Record<string, unknown>);
}

export async function getUser(login: string): Promise<User | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: userProfileKey(login) }));
  return Item ? toUser(Item) : undefined;
}

export async function getUserById(id: number): Promise<User | undefined> {
  const index = TABLE.indexes.GSI1;
  const { Items } = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'GSI1',
      KeyConditionExpression: '#pk = :pk AND #sk = :sk',
      ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
      ExpressionAttributeValues: { ':pk': userIdIndexKey(id).GSI1PK, ':sk': userIdIndexKey(id).GSI1SK },
    }),
  );
  const item = Items?.[0];
  return item ? toUser(item) : undefined;
}

export interface LoginRecord {
  /** Absent when the login does not exist. */
  readonly account?: { readonly user: User; readonly credential: Credential };
  /** Failed attempts in the given window and the one before it. */
  readonly failures: number;
  /** Failed attempts in the window before the given one (closed: only releases still lower it). */
  readonly previousFailures: number;
}

/** A window's failures: its attempts less those still being checked (`pending`). */
const failuresIn = (item: Record<string, unknown> | undefined): number =>
  Number(item?.attempts ?? 0) - Number(item?.pending ?? 0);

/**
 * What Basic authentication needs, in one strongly consistent round trip: the user, their
 * credential, and the failed attempts of the current and previous windows in `counter`.
 */
export async function getLoginRecord(
  login: string,
  window: number,
  counter: FailureCounter = 'password',
): Promise<LoginRecord> {
  const profile = userProfileKey(login);
  const credential = credentialKey(login);
  const current = failedLoginKey(login, window, counter);
  const previous = failedLoginKey(login, window - 1, counter);
  const items = await getItems([profile, credential, current, previous], true);
  const profileItem = itemOf(items, profile);
  const credentialItem = itemOf(items, credential);
  const previousFailures = failuresIn(itemOf(items, previous));
  const failures = previousFailures + failuresIn(itemOf(items, current));
  if (!profileItem || !credentialItem) return { failures, previousFailures };
  // A fresh, strong read: what a request signed in this way shows of the profile needs no other.
  const signedIn = toProfile(profileItem);
  remember(login, signedIn);
  return {
    account: {
      user: signedIn.user,
      credential: {
        passwordHash: String(credentialItem.passwordHash),
        ...(credentialItem.otpSecret ? { otpSecret: String(credentialItem.otpSecret) } : {}),
      },
    },
    failures,
    previousFailures,
  };
}

/**
 * Reserves one login attempt in the window before any secret is checked: an atomic conditional
 * ADD that succeeds only while the window holds fewer than `allowed` attempts (failures and
 * attempts still being checked), so concurrent guesses can never together exceed the limit.
 * `false` when the window is full. The item expires with the window.
 */
export async function reserveLoginAttempt(
  login: string,
  window: number,
  allowed: number,
  expiresAt: number,
  counter: FailureCounter = 'password',
): Promise<boolean> {
  if (allowed <= 0) return false;
  const written = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: failedLoginKey(login, window, counter),
        UpdateExpression:
          'ADD #attempts :one, #pending :one SET #type = :type, #expiresAt = :expiresAt, #updatedAt = :now',
        ConditionExpression: 'attribute_not_exists(#attempts) OR #attempts < :allowed',
        ExpressionAttributeNames: {
          '#attempts': 'attempts',
          '#pending': 'pending',
          '#type': TABLE.typeAttribute,
          '#expiresAt': 'expiresAt',
          '#updatedAt': 'updatedAt',
        },
        ExpressionAttributeValues: {
          ':one': 1,
          ':allowed': allowed,
          ':type': 'FailedLogins',
          ':expiresAt': expiresAt,
          ':now': now(),
        },
      }),
    ),
  );
  return written !== false;
}

/**
 * Settles an attempt reserved in `window`: a failure stays counted (only `pending` drops); anything
 * else is given back.
 */
export async function settleLoginAttempt(
  login: string,
  window: number,
  failed: boolean,
  counter: FailureCounter = 'password',
): Promise<void> {
  await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: failedLoginKey(login, window, counter),
        UpdateExpression: failed
          ? 'ADD #pending :minusOne SET #updatedAt = :now'
          : 'ADD #attempts :minusOne, #pending :minusOne SET #updatedAt = :now',
        ConditionExpression: '#pending > :zero',
        ExpressionAttributeNames: {
          '#pending': 'pending',
          '#updatedAt': 'updatedAt',
          ...(failed ? {} : { '#attempts': 'attempts' }),
        },
        ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0, ':now': now() },
      }),
    ),
  );
}

/**
 * Replaces a password hash with one of newer parameters, only if it is still the hash that was
 * verified (a password changed meanwhile wins). `false` when it was not replaced.
 */
export async function upgradePasswordHash(
  login: string,
  verified: string,
  upgraded: string,
): Promise<boolean> {
  const written = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: credentialKey(login),
        UpdateExpression: 'SET passwordHash = :upgraded, updatedAt = :now',
        ConditionExpression: 'passwordHash = :verified',
        ExpressionAttributeValues: { ':upgraded': upgraded, ':verified': verified, ':now': now() },
      }),
    ),
  );
  return written !== false;
}

/**
 * Spends a TOTP time step: succeeds only for a step later than the last one spent, so a code
 * cannot be replayed within its window (or an older code after a newer one).
 */
export async function consumeOtpStep(login: string, step: number): Promise<boolean> {
  const written = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: credentialKey(login),
        UpdateExpression: 'SET #last = :step',
        ConditionExpression: `${ITEM_EXISTS} AND (attribute_not_exists(#last) OR #last < :step)`,
        ExpressionAttributeNames: { '#last': 'lastOtpStep' },
        ExpressionAttributeValues: { ':step': step },
      }),
    ),
  );
  return written !== false;
}

/**
 * Stores a TOTP secret (sealed by the caller: this layer never sees the seed); `false` when the
 * user does not exist, or when `replacing` is given and the stored value is no longer it.
 */
export async function setOtpSecret(
  login: string,
  sealedSecret: string,
  replacing?: string,
): Promise<boolean> {
  const timestamp = now();
  const credential = {
    TableName: tableName(),
    Key: credentialKey(login),
    UpdateExpression: 'SET otpSecret = :secret, updatedAt = :now',
    ConditionExpression: replacing === undefined ? ITEM_EXISTS : `${ITEM_EXISTS} AND otpSecret = :replacing`,
    ExpressionAttributeValues: {
      ':secret': sealedSecret,
      ':now': timestamp,
      ...(replacing === undefined ? {} : { ':replacing': replacing }),
    },
  };
  // Re-sealing the same seed changes nothing the profile shows; turning two-factor on does.
  const written = await conditionalWrite<unknown>(
    replacing !== undefined
      ? db().send(new UpdateCommand(credential))
      : db().send(
          new TransactWriteCommand({
            TransactItems: [
              { Update: credential },
              {
                Update: {
                  TableName: tableName(),
                  Key: userProfileKey(login),
                  UpdateExpression: 'SET twoFactor = :on, updatedAt = :now',
                  ConditionExpression: ITEM_EXISTS,
                  ExpressionAttributeValues: { ':on': true, ':now': timestamp },
                },
              },
            ],
          }),
        ),
  );
  return written !== false;
}

/** The user's stored (sealed) TOTP secret, read strongly; undefined when two-factor is off or there is no user. */
export async function getOtpSecret(login: string): Promise<string | undefined> {
  const { Item: item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: credentialKey(login), ConsistentRead: true }),
  );
  return typeof item?.otpSecret === 'string' ? item.otpSecret : undefined;
}

/**
 * Turns two-factor off: removes the secret read as `sealedSecret` (not one set since) and marks the
 * profile, in one transaction with `along` (the security log's entry); `false` when the secret is
 * no longer that one.
 */
export async function removeOtpSecret(
  login: string,
  sealedSecret: string,
  along: readonly TransactItem[],
): Promise<boolean> {
  const timestamp = now();
  const written = await conditionalWrite<unknown>(
    db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: credentialKey(login),
              UpdateExpression: 'REMOVE otpSecret SET updatedAt = :now',
              ConditionExpression: `${ITEM_EXISTS} AND otpSecret = :secret`,
              ExpressionAttributeValues: { ':secret': sealedSecret, ':now': timestamp },
            },
          },
          {
            Update: {
              TableName: tableName(),
              Key: userProfileKey(login),
              UpdateExpression: 'SET twoFactor = :off, updatedAt = :now',
              ConditionExpression: ITEM_EXISTS,
              ExpressionAttributeValues: { ':off': false, ':now': timestamp },
            },
          },
          ...along,
        ],
      }),
    ),
  );
  if (written !== false) recentProfiles.delete(login);
  return written !== false;
}

/** Profiles recently read by this container: login → [read at, profile]. */
const recentProfiles = new Map<string, readonly [number, Profile]>();
const RECENT_PROFILES_MAX = 1000;

function remember(login: string, profile: Profile): void {
  if (recentProfiles.size >= RECENT_PROFILES_MAX)
    recentProfiles.delete(recentProfiles.keys().next().value ?? '');
  recentProfiles.set(foldAsciiCase(login), [Date.now(), profile]);
}

/** A user's profile with the counts it shows, in one GetItem. */
export async function getProfile(login: string): Promise<Profile | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: userProfileKey(login) }));
  if (!Item) return undefined;
  const profile = toProfile(Item);
  remember(login, profile);
  return profile;
}

/**
 * A user's profile, from this container's memory when read in the last `maxAgeMs`. Only for
 * display data after the credential itself was checked against the table (token lookups are
 * never cached, so revocation still takes effect on the next request).
 */
export async function getProfileRecent(login: string, maxAgeMs: number): Promise<Profile | undefined> {
  const hit = recentProfiles.get(foldAsciiCase(login));
  if (hit && Date.now() - hit[0] < maxAgeMs) return hit[1];
  return getProfile(login);
}

export const getUserRecent = async (login: string, maxAgeMs: number): Promise<User | undefined> =>
  (await getProfileRecent(login, maxAgeMs))?.user;
