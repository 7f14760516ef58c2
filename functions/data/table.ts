/**
 * The physical shape of the one DynamoDB table. `lib/cdk` builds the CloudFormation table from
 * this object and the local stack creates DynamoDB Local's table from it, so the deployed and local
 * tables cannot drift. Every item carries `_type`, `createdAt` and `updatedAt`; items that expire
 * (OAuth codes, sessions, failed-login windows) carry `expiresAt` in epoch seconds.
 */
export const TABLE = {
  partitionKey: 'PK',
  sortKey: 'SK',
  ttlAttribute: 'expiresAt',
  typeAttribute: '_type',
  indexes: {
    GSI1: { partitionKey: 'GSI1PK', sortKey: 'GSI1SK' },
  },
} as const;

export type IndexName = keyof typeof TABLE.indexes;

/** Key attributes in the order DynamoDB wants them in CreateTable. */
export function keyAttributeNames(): string[] {
  const names: string[] = [TABLE.partitionKey, TABLE.sortKey];
  for (const index of Object.values(TABLE.indexes)) names.push(index.partitionKey, index.sortKey);
  return names;
}

/** Write conditions on an item's existence, tested on its partition key. */
export const ITEM_EXISTS = `attribute_exists(${TABLE.partitionKey})`;
export const ITEM_ABSENT = `attribute_not_exists(${TABLE.partitionKey})`;

/** The entity-type attribute of an item being written: spread it into the item. */
export const typed = (type: string): Readonly<Record<typeof TABLE.typeAttribute, string>> => ({
  [TABLE.typeAttribute]: type,
});

/** The entity type of an item as read. */
export const typeOf = (item: Record<string, unknown>): unknown => item[TABLE.typeAttribute];
