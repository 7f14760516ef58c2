import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { counterKey } from './keys.ts';
import { TABLE } from './table.ts';

/** Entities with integer ids. */
export type IdKind =
  | 'user'
  | 'app'
  | 'repository'
  | 'authorization'
  | 'grant'
  | 'key'
  | 'import'
  | 'import-author';

/**
 * The next integer id for an entity kind: one atomic UpdateItem ADD, so concurrent callers never
 * get the same id and a failed create never hands its id out again.
 */
export async function nextId(kind: IdKind): Promise<number> {
  const result = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: counterKey(kind),
      UpdateExpression: 'ADD #value :one SET #type = :type',
      ExpressionAttributeNames: { '#value': 'value', '#type': TABLE.typeAttribute },
      ExpressionAttributeValues: { ':one': 1, ':type': 'Counter' },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(result.Attributes?.value);
}
