import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Repository } from '#domain/repositories';
import { conditionalWrite, db, now, tableName, transactWithRetry } from './client.ts';
import { nextId } from './counters.ts';
import { markOwnerPushed } from './imports/requests.ts';
import { importKey, repoKey, repoOwnerIndexAfter, repoOwnerIndexKey, userProfileKey } from './keys.ts';
import { ITEM_ABSENT, ITEM_EXISTS, TABLE, typed } from './table.ts';

const toRepository = (item: Record<string, unknown>): Repository => ({
  id: Number(item.id),
  ownerLogin: String(item.ownerLogin),
  name: String(item.name),
  description: (item.description as string | null | undefined) ?? null,
  homepage: (item.homepage as string | null | undefined) ?? null,
  private: Boolean(item.private),
  defaultBranch: String(item.defaultBranch),
  createdAt: String(item.createdAt),
  updatedAt: String(item.updatedAt),
  // Items written before pushed_at was set at creation have null: their creation time is right.
  pushedAt: String(item.pushedAt ?? item.createdAt),
  size: Number(item.size ?? 0),
  hasContent: item.hasContent === true,
});

export interface NewRepository {
  readonly ownerLogin: string;
  readonly name: string;
  readonly description?: string | null | undefined;
  readonly homepage?: string | null | undefined;
  readonly private?: boolean | undefined;
}

/** Creates a repository; `null` when the owner already has one of that name (case-insensitively). */
export async function createRepository(input: NewRepository): Promise<Repository | null> {
  const id = await nextId('repository');
  const timestamp = now();
  const item = {
    id,
    ownerLogin: input.ownerLogin,
    name: input.name,
    description: input.description ?? null,
    homepage: input.homepage ?? null,
    private: input.private ?? false,
    defaultBranch: 'main',
    createdAt: timestamp,
    updatedAt: timestamp,
    pushedAt: timestamp,
    size: 0,
    hasContent: false,
  };
  // The owner's profile counts its repositories in the same transaction (a profile is one read).
  const outcome = await transactWithRetry(
    [
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...repoKey(input.ownerLogin, input.name),
            ...repoOwnerIndexKey(input.ownerLogin, input.name),
            ...typed('Repository'),
            ...item,
          },
          ConditionExpression: ITEM_ABSENT,
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: userProfileKey(input.ownerLogin),
          UpdateExpression: 'ADD #count :one',
          ConditionExpression: ITEM_EXISTS,
          ExpressionAttributeNames: { '#count': item.private ? 'privateRepos' : 'publicRepos' },
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
    ],
    'createRepository',
  );
  if (outcome === 'ok') return toRepository(item);
  if (outcome.failedIndex === 0) return null;
  throw new Error('createRepository: the owner has no profile');
}

/**
 * Removes a repository that was just made and holds nothing: no content, no import (a start that
 * failed after the repository was made, decision 0136). `false` when it no longer qualifies
 * (something arrived meanwhile): it is then left as it is.
 */
export async function removeEmptyRepository(repository: Repository): Promise<boolean> {
  const outcome = await transactWithRetry(
    [
      {
        Delete: {
          TableName: tableName(),
          Key: repoKey(repository.ownerLogin, repository.name),
          ConditionExpression: `${ITEM_EXISTS} AND hasContent = :false`,
          ExpressionAttributeValues: { ':false': false },
        },
      },
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: importKey(repository.ownerLogin, repository.name),
          ConditionExpression: ITEM_ABSENT,
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: userProfileKey(repository.ownerLogin),
          UpdateExpression: 'ADD #count :minusOne',
          ConditionExpression: ITEM_EXISTS,
          ExpressionAttributeNames: { '#count': repository.private ? 'privateRepos' : 'publicRepos' },
          ExpressionAttributeValues: { ':minusOne': -1 },
        },
      },
    ],
    'removeEmptyRepository',
  );
  return outcome === 'ok';
}

/** One page of a user's repositories, in name order (case folded), after the name `after`. */
export async function pageOfRepositories(
  ownerLogin: string,
  limit: number,
  after?: string,
): Promise<{ readonly repositories: Repository[]; readonly more: boolean }> {
  const index = TABLE.indexes.GSI1;
  const prefix = repoOwnerIndexKey(ownerLogin, '');
  const { Items = [] } = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'GSI1',
      KeyConditionExpression:
        after === undefined
          ? '#pk = :pk AND begins_with(#sk, :prefix)'
          : '#pk = :pk AND #sk BETWEEN :after AND :end',
      ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
      ExpressionAttributeValues: {
        ':pk': prefix.GSI1PK,
        ...(after === undefined
          ? { ':prefix': prefix.GSI1SK }
          : { ':after': repoOwnerIndexAfter(after).from, ':end': repoOwnerIndexAfter(after).to }),
      },
      Limit: limit + 1,
    }),
  );
  return { repositories: Items.slice(0, limit).map(toRepository), more: Items.length > limit };
}

export async function getRepository(owner: string, name: string): Promise<Repository | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: repoKey(owner, name) }));
  return Item ? toRepository(Item) : undefined;
}

/** What a push left in the hosted repository. */
export interface PushRecord {
  /** KiB of git data in the bare repository. */
  readonly size: number;
  readonly hasContent: boolean;
  /** The default branch the push brought (an import names its origin's). */
  readonly defaultBranch?: string;
}

/**
 * Records a push: the repository's `pushedAt`, `size` and `hasContent` (and the default branch an
 * import brings). A push by the owner also marks the repository's import, if any, `ownerPushed`
 * (from then on the import may no longer rewrite history). The repository update requires the item (a deleted repository is not recreated); the
 * import update ignores a missing import. Returns the updated repository, `undefined` when it no
 * longer exists.
 */
export async function recordPush(
  owner: string,
  name: string,
  push: PushRecord,
  by: 'owner' | 'import' = 'owner',
): Promise<Repository | undefined> {
  const pushedAt = now();
  const branch = push.defaultBranch === undefined ? '' : ', defaultBranch = :branch';
  const updated = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: repoKey(owner, name),
        UpdateExpression: `SET pushedAt = :pushedAt, #size = :size, hasContent = :hasContent${branch}`,
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeNames: { '#size': 'size' },
        ExpressionAttributeValues: {
          ':pushedAt': pushedAt,
          ':size': push.size,
          ':hasContent': push.hasContent,
          ...(push.defaultBranch === undefined ? {} : { ':branch': push.defaultBranch }),
        },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  if (updated === false) return undefined;
  // The owner's own commits end the import's right to rewrite history; the import's push does not.
  if (by === 'owner') await markOwnerPushed(owner, name);
  return updated.Attributes ? toRepository(updated.Attributes) : undefined;
}
