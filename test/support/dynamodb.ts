import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { createTable } from '#local/create-table';
import { localDynamoDbClient } from '#local/dynamodb-local';

export interface FreshTable {
  readonly tableName: string;
  readonly client: DynamoDBClient;
  readonly endpoint: string;
}

/**
 * A new, empty table shaped like the real one, in the run's DynamoDB Local (see `global-setup.ts`).
 * Each call makes a uniquely named table, so test files never see each other's items.
 */
export async function freshTable(): Promise<FreshTable> {
  const endpoint = inject('dynamodbEndpoint');
  const tableName = `test-${randomUUID()}`;
  const client = localDynamoDbClient(endpoint);
  await createTable(client, tableName);
  return { tableName, client, endpoint };
}
