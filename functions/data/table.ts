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
