import { Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type IBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Construct, type IConstruct } from 'constructs';
import { ENV } from '#shared/config';
import { nagReference } from './function-defaults.ts';

export interface LfsObjectsProps {
  /** RETAIN for anything holding real repositories; a DESTROY stack's buckets must be emptied first. */
  readonly removalPolicy: RemovalPolicy;
}

/**
 * What `grantObjects` configures: a function (`ApiFunction`, `WorkerImageFunction`) or the Git
 * front end's task (its container's environment and its task role).
 */
export interface LfsObjectsUser {
  addEnvironment(name: string, value: string): unknown;
  addToRolePolicy(statement: PolicyStatement): unknown;
  /** The role the code runs as: a function's execution role, a task's task role. */
  readonly executionRole: IConstruct;
}

/** How long S3 server access logs are kept. */
const ACCESS_LOG_DAYS = 365;

/**
 * The S3 bucket holding every hosted repository's Git LFS objects (`<owner>/<repo>/<oid>`,
 * `functions/vcs/lfs-store-s3.ts`), and its server access logs. Clients reach it only through the
 * URLs the batch API presigns; nothing is public.
 *
 * Encrypted with S3-managed keys (SSE-S3), not the stack's KMS key: a presigned URL acts with the
 * signer's permissions, so SSE-KMS would need `kms:Decrypt`/`kms:GenerateDataKey` for the batch
 * route's role on every object and a KMS request per transfer, and the secrets key is kept to
 * sealed secrets by its encryption-context conditions. Unversioned: an object is immutable under
 * its oid. Multipart uploads (none today; S3's 5 GB single-PUT limit is the object limit) are
 * aborted after a day.
 */
export class LfsObjects extends Construct {
  public readonly bucket: Bucket;
  public readonly accessLogs: Bucket;

  constructor(scope: Construct, id: string, props: LfsObjectsProps) {
    super(scope, id);
    this.accessLogs = new Bucket(this, 'AccessLogs', {
      // Server access logs can be delivered only to SSE-S3 buckets.
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      versioned: false,
      lifecycleRules: [{ expiration: Duration.days(ACCESS_LOG_DAYS) }],
      removalPolicy: props.removalPolicy,
    });
    this.bucket = new Bucket(this, 'Bucket', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      versioned: false,
      lifecycleRules: [{ abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'lfs-objects/',
      removalPolicy: props.removalPolicy,
    });
  }

  /**
   * What code that uses the LFS store gets (the Git front end, whose batch API presigns, and the
   * import workers' Push step, which puts): `LFS_BUCKET`, GetObject and PutObject on the bucket's objects
   * (a presigned URL acts with these; HeadObject is authorised by GetObject), and ListBucket on the
   * bucket itself so that HeadObject answers a missing object with 404 instead of 403. No delete,
   * no ACLs, no other bucket. A function in a nested stack passes the bucket as its stack sees it.
   */
  grantObjects(fn: LfsObjectsUser, seenFrom: IBucket = this.bucket): void {
    fn.addEnvironment(ENV.lfsBucket, seenFrom.bucketName);
    const objects = seenFrom.arnForObjects('*');
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ['s3:GetObject', 's3:PutObject'], resources: [objects] }),
    );
    fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [seenFrom.bucketArn] }));
    Validations.of(fn.executionRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagReference(Stack.of(fn.executionRole).resolve(objects))}]`,
      reason:
        'Git LFS objects are keyed <owner>/<repo>/<oid> for every hosted repository, so the object wildcard spans this one bucket; the batch API checks access to the repository before presigning, and the actions are only GetObject and PutObject.',
    });
  }
}
