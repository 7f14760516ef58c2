import { beforeAll, describe, expect, it } from 'vitest';
import { freshTable } from '#test/dynamodb';

let client: typeof import('#data/client');

beforeAll(async () => {
  const table = await freshTable();
  process.env.TABLE_NAME = table.tableName;
  process.env.DYNAMODB_ENDPOINT = table.endpoint;
  client = await import('#data/client');
});

describe('transact', () => {
  it('throws a validation error at once instead of reporting contention to retry', async () => {
    const put = (pk: string) => ({
      Put: {
        TableName: client.tableName(),
        Item: { PK: pk, SK: 'X' },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    });
    // A partition key over DynamoDB's 2048-byte limit: the whole transaction is cancelled as invalid.
    await expect(client.transact([put('ok'), put('K'.repeat(3000))])).rejects.toThrow();
    // A failed condition is still an outcome, not an error.
    await client.transact([put('taken')]);
    await expect(client.transact([put('other'), put('taken')])).resolves.toMatchObject({
      failedIndex: 1,
      failed: [1],
    });
  });
});
