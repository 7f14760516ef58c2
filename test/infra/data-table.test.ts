import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyAttributeNames, TABLE } from '#data/table';
import { type SynthesizedService, synthService } from '#test/synth';

describe('DataTable', () => {
  let synth: SynthesizedService;
  let table: { Properties: Record<string, unknown>; DeletionPolicy?: string; UpdateReplacePolicy?: string };

  beforeAll(() => {
    synth = synthService();
    const tables = Object.values(synth.template.findResources('AWS::DynamoDB::Table'));
    expect(tables).toHaveLength(1);
    table = tables[0] as typeof table;
  });
  afterAll(() => synth?.dispose());

  it('has the key schema of data/table.ts', () => {
    expect(table.Properties.KeySchema).toEqual([
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ]);
  });

  it('defines every key attribute, and only those, as a string', () => {
    const definitions = table.Properties.AttributeDefinitions as {
      AttributeName: string;
      AttributeType: string;
    }[];
    expect(definitions.map((definition) => definition.AttributeName).sort()).toEqual(
      keyAttributeNames().sort(),
    );
    expect(new Set(definitions.map((definition) => definition.AttributeType))).toEqual(new Set(['S']));
  });

  it('has exactly the global secondary indexes of data/table.ts, projecting all attributes', () => {
    expect(table.Properties.GlobalSecondaryIndexes).toEqual(
      Object.entries(TABLE.indexes).map(([indexName, index]) => ({
        IndexName: indexName,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    );
  });

  it('expires items by the TTL attribute of data/table.ts', () => {
    expect(table.Properties.TimeToLiveSpecification).toEqual({
      AttributeName: TABLE.ttlAttribute,
      Enabled: true,
    });
  });

  it('bills on demand, keeps point-in-time recovery and encrypts with the AWS-managed KMS key', () => {
    expect(table.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
    });
    expect(table.Properties.ProvisionedThroughput).toBeUndefined();
    expect(table.Properties.SSESpecification).not.toHaveProperty('KMSMasterKeyId');
  });

  it('is retained and deletion-protected by default', () => {
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(table.Properties.DeletionProtectionEnabled).toBe(true);
  });
});
