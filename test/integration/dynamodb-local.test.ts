import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import {
  ConditionalCheckFailedException,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyAttributeNames, TABLE } from '#data/table';
import { createTable } from '#local/create-table';
import { type FreshTable, freshTable } from '#test/dynamodb';

/** The machine's first non-loopback IPv4 address, if it has one. */
function externalIPv4(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv4' && !address.internal) return address.address;
    }
  }
  return undefined;
}

/** Resolves with the connection's error code, or 'connected' when the port accepted it. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('ETIMEDOUT');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

const item = (pk: string, extra: Record<string, { S: string }> = {}) => ({
  [TABLE.partitionKey]: { S: pk },
  [TABLE.sortKey]: { S: 'item' },
  ...extra,
});

describe('DynamoDB Local', () => {
  let table: FreshTable;
  let port: number;

  beforeAll(async () => {
    table = await freshTable();
    port = Number(new URL(table.endpoint).port);
  });

  afterAll(() => table?.client.destroy());

  it('answers on its loopback endpoint', async () => {
    // One page from this test's own name on: the run's other files have tables of their own, and a
    // page holds 100 names.
    const { TableNames } = await table.client.send(
      new ListTablesCommand({ ExclusiveStartTableName: table.tableName.slice(0, -1), Limit: 100 }),
    );

    expect(table.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(TableNames).toContain(table.tableName);
  });

  const external = externalIPv4();
  it.skipIf(!external)(
    `refuses connections on the machine's other address (${external ?? 'none'})`,
    async () => {
      expect(await tryConnect('127.0.0.1', port)).toBe('connected');
      expect(await tryConnect(external as string, port)).toBe('ECONNREFUSED');
    },
  );
});

describe('createTable', () => {
  let table: FreshTable;

  beforeAll(async () => {
    table = await freshTable();
  });

  afterAll(() => table?.client.destroy());

  it('builds the keys, indexes and billing mode of TABLE', async () => {
    const { Table } = await table.client.send(new DescribeTableCommand({ TableName: table.tableName }));

    expect(Table?.TableStatus).toBe('ACTIVE');
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(Table?.KeySchema).toEqual([
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ]);
    expect(
      Table?.AttributeDefinitions?.map(({ AttributeName, AttributeType }) => [
        AttributeName,
        AttributeType,
      ]).sort(),
    ).toEqual(
      keyAttributeNames()
        .map((name) => [name, 'S'])
        .sort(),
    );
    const indexes = (Table?.GlobalSecondaryIndexes ?? []).map(({ IndexName, KeySchema, Projection }) => ({
      IndexName,
      KeySchema,
      ProjectionType: Projection?.ProjectionType,
    }));
    expect(indexes).toEqual(
      Object.entries(TABLE.indexes).map(([name, index]) => ({
        IndexName: name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        ProjectionType: 'ALL',
      })),
    );
    expect(Table?.LocalSecondaryIndexes).toBeUndefined();
  });

  it('enables TTL on the TTL attribute', async () => {
    const { TimeToLiveDescription } = await table.client.send(
      new DescribeTimeToLiveCommand({ TableName: table.tableName }),
    );

    expect(TimeToLiveDescription).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: TABLE.ttlAttribute });
  });

  it('leaves an existing table as it is when called again', async () => {
    await table.client.send(new PutItemCommand({ TableName: table.tableName, Item: item('kept') }));

    await createTable(table.client, table.tableName);

    const { Item } = await table.client.send(
      new GetItemCommand({ TableName: table.tableName, Key: item('kept') }),
    );
    expect(Item).toEqual(item('kept'));
  });
});

describe('DynamoDB Local conditions and transactions', () => {
  let table: FreshTable;

  beforeAll(async () => {
    table = await freshTable();
  });

  afterAll(() => table?.client.destroy());

  const putIfAbsent = (pk: string) =>
    new PutItemCommand({
      TableName: table.tableName,
      Item: item(pk),
      ConditionExpression: 'attribute_not_exists(#pk)',
      ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
    });

  it('rejects a conditional write whose condition fails', async () => {
    await table.client.send(putIfAbsent('unique'));

    const second = table.client.send(putIfAbsent('unique'));

    await expect(second).rejects.toBeInstanceOf(ConditionalCheckFailedException);
  });

  it('applies no write of a transaction in which one condition fails', async () => {
    await table.client.send(new PutItemCommand({ TableName: table.tableName, Item: item('taken') }));

    const transaction = table.client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: table.tableName, Item: item('fresh', { note: { S: 'written?' } }) } },
          {
            Put: {
              TableName: table.tableName,
              Item: item('taken', { note: { S: 'overwritten?' } }),
              ConditionExpression: 'attribute_not_exists(#pk)',
              ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
            },
          },
        ],
      }),
    );

    await expect(transaction).rejects.toBeInstanceOf(TransactionCanceledException);
    await expect(transaction).rejects.toMatchObject({
      CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }],
    });
    const fresh = await table.client.send(
      new GetItemCommand({ TableName: table.tableName, Key: item('fresh') }),
    );
    const taken = await table.client.send(
      new GetItemCommand({ TableName: table.tableName, Key: item('taken') }),
    );
    expect(fresh.Item).toBeUndefined();
    expect(taken.Item).toEqual(item('taken'));
  });

  it('applies every write of a transaction whose conditions hold', async () => {
    await table.client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: table.tableName, Item: item('first') } },
          { Put: { TableName: table.tableName, Item: item('second') } },
        ],
      }),
    );

    const first = await table.client.send(
      new GetItemCommand({ TableName: table.tableName, Key: item('first') }),
    );
    const second = await table.client.send(
      new GetItemCommand({ TableName: table.tableName, Key: item('second') }),
    );
    expect(first.Item).toEqual(item('first'));
    expect(second.Item).toEqual(item('second'));
  });
});
