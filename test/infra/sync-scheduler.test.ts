import { Match } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYNC_DUE_SHARDS, syncDuePartition } from '#data/keys';
import { TABLE } from '#data/table';
import { type SynthesizedService, synthService } from '#test/synth';

describe('SyncScheduler in the service stack', () => {
  let synth: SynthesizedService;
  beforeAll(() => {
    synth = synthService();
  });
  afterAll(() => synth?.dispose());

  it('invokes the scheduler image function once a minute, without retrying a tick', () => {
    const functions = synth.template.findResources('AWS::Lambda::Function', {
      Properties: { ImageConfig: { Command: ['start-due-syncs.handler'] } },
    });
    const ids = Object.keys(functions);
    expect(ids).toHaveLength(1);
    const [id] = ids;
    synth.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({ Arn: { 'Fn::GetAtt': [id, 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 } }),
      ],
    });
    synth.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [id, 'Arn'] },
    });
  });

  it('lets the scheduler start executions of the import workflow and nothing else of it', () => {
    const policies = Object.values(synth.template.findResources('AWS::IAM::Policy')).filter((policy) =>
      JSON.stringify(policy).includes('states:StartExecution'),
    );
    expect(JSON.stringify(policies)).toContain('SyncScheduler');
  });

  it('queries due syncs on GSI1 of the one table, which data/table.ts defines', () => {
    const [table] = Object.values(synth.template.findResources('AWS::DynamoDB::Table'));
    const indexes = (table?.Properties.GlobalSecondaryIndexes ?? []) as {
      IndexName: string;
      KeySchema: unknown;
    }[];
    expect(indexes.find((index) => index.IndexName === 'GSI1')?.KeySchema).toEqual([
      { AttributeName: TABLE.indexes.GSI1.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.indexes.GSI1.sortKey, KeyType: 'RANGE' },
    ]);
    expect(syncDuePartition(SYNC_DUE_SHARDS - 1)).toBe(`SYNCDUE#${SYNC_DUE_SHARDS - 1}`);
  });
});
