import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config';

let documentClient: DynamoDBDocumentClient | undefined;

/**
 * The one DocumentClient of the process, built on first use so that entry points (the admin CLI,
 * the local stack) can set the environment before any data module touches it.
 */
export function db(): DynamoDBDocumentClient {
  if (!documentClient) {
    const { dynamodbEndpoint } = config();
    const client = dynamodbEndpoint
      ? new DynamoDBClient({
          endpoint: dynamodbEndpoint,
          region: process.env.AWS_REGION ?? 'us-east-1',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        })
      : new DynamoDBClient({});
    documentClient = DynamoDBDocumentClient.from(client, {
      marshallOptions: { removeUndefinedValues: true },
    });
  }
  return documentClient;
}

export function tableName(): string {
  return config().tableName;
}

/** True when DynamoDB refused a write because its condition (or a transaction's) did not hold. */
export function isConditionFailure(error: unknown): boolean {
  const name = (error as { name?: string } | undefined)?.name;
  return name === 'ConditionalCheckFailedException' || name === 'TransactionCanceledException';
}

/** Timestamps as GitHub writes them: ISO 8601 UTC without fractional seconds. */
export function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}
