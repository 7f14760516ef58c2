import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Repository, RepositoryCounts } from '#domain/repositories';
import { conditionalWrite, db, now, tableName } from './client.ts';
import { nextId } from './counters.ts';
import { repoKey, repoOwnerIndexKey } from './keys.ts';
import { ITEM_ABSENT, TABLE, typed } from './table.ts';

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
  };
  const written = await conditionalWrite(
    db().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...repoKey(input.ownerLogin, input.name),
          ...repoOwnerIndexKey(input.ownerLogin, input.name),
          ...typed('Repository'),
          ...item,
        },
        ConditionExpression: ITEM_ABSENT,
      }),
    ),
  );
  if (written === false) return null;
  return toRepository(item);
}

export async function getRepository(owner: string, name: string): Promise<Repository | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: repoKey(owner, name) }));
  return Item ? toRepository(Item) : undefined;
}

/** Counts an owner's repositories by visibility (owner index, visibility attribute only). */
export async function countRepositories(ownerLogin: string): Promise<RepositoryCounts> {
  const index = TABLE.indexes.GSI1;
  const prefix = repoOwnerIndexKey(ownerLogin, '');
  const counts = { public: 0, private: 0 };
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI1',
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :sk)',
        ProjectionExpression: '#private',
        ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey, '#private': 'private' },
        ExpressionAttributeValues: { ':pk': prefix.GSI1PK, ':sk': prefix.GSI1SK },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) counts[item.private ? 'private' : 'public'] += 1;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return counts;
}
