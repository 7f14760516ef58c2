import { beforeAll, describe, expect, inject, it } from 'vitest';
import { ENV } from '#shared/config';
import { ROUTES } from '#shared/routes';
import { type CfnResource, loadDeployment } from '#test/deployment';

type Resources = Record<string, CfnResource>;

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

const ofType = (resources: Resources, type: string): [string, CfnResource][] =>
  Object.entries(resources).filter(([, resource]) => resource.Type === type);

function statementsOf(resources: Resources, roleId: string): Statement[] {
  return ofType(resources, 'AWS::IAM::Policy')
    .filter(([, policy]) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

/** An ARN as text, the LFS bucket named `BUCKET` whether referenced by Ref or by its Arn attribute. */
function arnText(value: unknown, bucketId: string): string {
  if (typeof value === 'string') return value;
  const node = value as { Ref?: string; 'Fn::GetAtt'?: [string, string]; 'Fn::Join'?: [string, unknown[]] };
  if (node.Ref === 'AWS::Partition') return 'aws';
  if (node.Ref === bucketId) return 'BUCKET';
  if (node['Fn::GetAtt']?.[0] === bucketId && node['Fn::GetAtt'][1] === 'Arn') return 'arn:aws:s3:::BUCKET';
  const join = node['Fn::Join'];
  if (join) return join[1].map((part) => arnText(part, bucketId)).join(join[0]);
  return JSON.stringify(value);
}

describe('the Git LFS objects bucket (the one cdk synth of the infra project)', () => {
  let resources: Resources;
  let bucketId: string;
  let bucket: CfnResource;
  const functionsWith = (description: string) =>
    ofType(resources, 'AWS::Lambda::Function').filter(([, fn]) => fn.Properties.Description === description);

  beforeAll(() => {
    resources = loadDeployment(inject('cdkOut'), 'OAuthImportService').resources;
    const withLogging = ofType(resources, 'AWS::S3::Bucket').filter(
      ([, candidate]) => candidate.Properties.LoggingConfiguration !== undefined,
    );
    expect(withLogging).toHaveLength(1);
    [bucketId, bucket] = withLogging[0] as [string, CfnResource];
  });

  it('is private, SSE-S3 encrypted, unversioned, kept on stack deletion and aborts stale multipart uploads', () => {
    expect(ofType(resources, 'AWS::S3::Bucket')).toHaveLength(2);
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.Properties.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(bucket.Properties.VersioningConfiguration).toBeUndefined();
    expect(bucket.Properties.OwnershipControls).toEqual({
      Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }],
    });
    expect(bucket.Properties.LifecycleConfiguration.Rules).toEqual([
      { AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' },
    ]);
    expect(bucket.DeletionPolicy).toBe('Retain');
  });

  it('logs access to the other bucket, which expires the logs', () => {
    const logsId = (bucket.Properties.LoggingConfiguration.DestinationBucketName as { Ref: string }).Ref;
    const logs = resources[logsId] as CfnResource;
    expect(logs.Type).toBe('AWS::S3::Bucket');
    expect(logs.Properties.PublicAccessBlockConfiguration.RestrictPublicBuckets).toBe(true);
    expect(logs.Properties.LifecycleConfiguration.Rules).toEqual([
      { ExpirationInDays: 365, Status: 'Enabled' },
    ]);
  });

  it('refuses every request without TLS, on both buckets', () => {
    const policies = ofType(resources, 'AWS::S3::BucketPolicy');
    expect(policies).toHaveLength(2);
    for (const [, policy] of policies) {
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 's3:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    }
  });

  /** The Git front end's container (it serves the LFS batch route, `servedBy: 'git-frontend'`). */
  const frontEnd = () => {
    const [[, task] = ['', undefined as never], ...others] = ofType(resources, 'AWS::ECS::TaskDefinition');
    expect(others).toEqual([]);
    const [container] = task.Properties.ContainerDefinitions as {
      Environment: { Name: string; Value: unknown }[];
    }[];
    return { task, container };
  };

  it('names the bucket in LFS_BUCKET of exactly the Push worker and the Git front end, which serves the LFS batch route', () => {
    const batch = ROUTES.find((route) => route.handler === 'git/lfs-batch');
    expect(batch?.uses).toContain('lfs-objects');
    expect(batch?.servedBy).toBe('git-frontend');
    const withBucket = ofType(resources, 'AWS::Lambda::Function')
      .filter(([, fn]) => fn.Properties.Environment?.Variables?.[ENV.lfsBucket] !== undefined)
      .map(([, fn]) => {
        expect(fn.Properties.Environment.Variables[ENV.lfsBucket]).toEqual({ Ref: bucketId });
        return fn.Properties.Description;
      });
    expect(withBucket).toEqual(['Import workflow: Push']);
    expect(frontEnd().container?.Environment).toContainEqual({
      Name: ENV.lfsBucket,
      Value: { Ref: bucketId },
    });
  });

  it('grants those two Get/PutObject on the objects and ListBucket on the bucket, and no other role anything of S3', () => {
    const granted = [
      ...functionsWith('Import workflow: Push').map(
        ([, fn]) => (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
      ),
      (frontEnd().task.Properties.TaskRoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
    ];
    expect(granted).toHaveLength(2);
    for (const role of ofType(resources, 'AWS::IAM::Role').map(([id]) => id)) {
      const s3 = statementsOf(resources, role)
        .filter((statement) => [statement.Action].flat().some((action) => action.startsWith('s3:')))
        .map((statement) => ({
          effect: statement.Effect,
          actions: [statement.Action].flat().sort(),
          resources: [statement.Resource].flat().map((resource) => arnText(resource, bucketId)),
          condition: statement.Condition,
        }));
      if (!granted.includes(role)) {
        expect(s3, role).toEqual([]);
        continue;
      }
      expect(s3, role).toEqual([
        {
          effect: 'Allow',
          actions: ['s3:GetObject', 's3:PutObject'],
          resources: ['arn:aws:s3:::BUCKET/*'],
          condition: undefined,
        },
        {
          effect: 'Allow',
          actions: ['s3:ListBucket'],
          resources: ['arn:aws:s3:::BUCKET'],
          condition: undefined,
        },
      ]);
    }
  });
});
