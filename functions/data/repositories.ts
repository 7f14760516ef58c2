import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Repository } from '#domain/repositories';
import { conditionalWrite, db, now, tableName } from './client.ts';
import { nextId } from './counters.ts';
import { repoKey, repoOwnerIndexKey } from './keys.ts';
import { ITEM_ABSENT, typed } from './table.ts';

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
  pushedAt: (item.pushedAt as string | null | undefined) ?? null,
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
    pushedAt: null,
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
