import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { TABLE } from '#data/table';
import { ENV } from '#shared/config';
import { ESM_REQUIRE_BANNER, MAIN_FIELDS, RUNTIME_ENVIRONMENT, ZIP_EXTERNAL_MODULES } from './bundling.ts';
import {
  allowNetworkInterfaces,
  bindTable,
  type FunctionNetwork,
  functionExecution,
  type TableAccess,
} from './function-defaults.ts';
import { LOCK_FILE, PROJECT_ROOT, TSCONFIG_FILE } from './paths.ts';

/** What sign-in writes in a read-only function (see `data/users.ts`). */
export const SIGN_IN_ATTRIBUTES = [
  TABLE.partitionKey,
  TABLE.sortKey,
  'attempts',
  'pending',
  TABLE.typeAttribute,
  'expiresAt',
  'updatedAt',
  'lastOtpStep',
  'passwordHash',
  'otpSecret',
] as const;

/**
 * What a read-only function writes of a failed sign-in's security event (`data/security-log.ts`,
 * `countFailedSignIn`: one UpdateItem that counts it and answers the count).
 */
export const FAILED_SIGN_IN_EVENT_ATTRIBUTES = [
  TABLE.partitionKey,
  TABLE.sortKey,
  TABLE.typeAttribute,
  'count',
  'subject',
  'eventId',
  'login',
  'action',
  'actor',
  'address',
  'userAgent',
  'createdAt',
  'updatedAt',
  'expiresAt',
] as const;

export type { TableAccess } from './function-defaults.ts';

export interface ApiFunctionProps {
  /** Absolute path of the handler module (build it with `paths.ts`); it must export `handler`. */
  readonly entry: string;
  /** Shown in the console; for routes `METHOD /path`. */
  readonly description?: string;
  /** Configuration variables (names from `ENV`); the table variable is set by `bindTable`. */
  readonly environment?: Readonly<Record<string, string>>;
  /** @default 512 */
  readonly memorySize?: number;
  /** @default 10 seconds, well under API Gateway's 29-second integration limit */
  readonly timeout?: Duration;
  /** What happens to the function's log group when it leaves the stack. @default RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
  /** In the VPC with the file system mounted (routes that use `repositories`); outside it by default. */
  readonly network?: FunctionNetwork;
}

/**
 * The house Lambda function: every zip-packaged function of the service (the routes' and the
 * workflow's table-only steps) is one of these, so runtime,
 * architecture, bundling, logging and tracing are decided here once. Table access is granted only
 * through `bindTable`, which sets the table name and the matching IAM grant together.
 */
export class ApiFunction extends NodejsFunction {
  /** The handler module this function was bundled from. */
  public readonly entry: string;
  /** The function's own role (no managed policies). */
  public readonly executionRole: Role;

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    const { logGroup, role } = functionExecution(scope, id, props);
    const network = props.network;

    super(scope, id, {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      // Pinned, not "latest": see the AwsSolutions-L1 acknowledgement below.
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      role,
      logGroup,
      tracing: Tracing.ACTIVE,
      depsLockFilePath: LOCK_FILE,
      projectRoot: PROJECT_ROOT,
      // The variable is set in `environment` instead: this switch warns on SDK v3 runtimes.
      awsSdkConnectionReuse: false,
      environment: { ...props.environment, ...network?.environment, ...RUNTIME_ENVIRONMENT },
      ...(network === undefined
        ? {}
        : {
            vpc: network.vpc,
            vpcSubnets: network.vpcSubnets,
            securityGroups: [...network.securityGroups],
            filesystem: network.filesystem,
          }),
      bundling: {
        format: OutputFormat.ESM,
        mainFields: MAIN_FIELDS,
        banner: ESM_REQUIRE_BANNER,
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        externalModules: [...ZIP_EXTERNAL_MODULES],
        tsconfig: TSCONFIG_FILE,
        forceDockerBundling: false,
      },
    });

    this.entry = props.entry;
    this.executionRole = role;
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is pinned on purpose: the runtime moves to a new major in one reviewed change, together with the Node.js version the tests and local server run on; Lambda supports nodejs22.x until Node.js 22 reaches end of life (April 2027).',
    });
    if (network !== undefined) allowNetworkInterfaces(role);
  }

  /**
   * Lets a read-only function record when a token was last used, and nothing else: UpdateItem on
   * the table, only for requests whose attribute names are the key, `lastUsedAt` and the
   * `tokenHash` its condition checks (IAM condition key `dynamodb:Attributes`).
   */
  allowRecordingTokenUse(table: ITable): void {
    this.allowUpdating(table, [TABLE.partitionKey, TABLE.sortKey, 'lastUsedAt', 'tokenHash']);
  }

  /** UpdateItem on the table, only for requests naming no attribute but these (`dynamodb:Attributes`). */
  private allowUpdating(table: ITable, attributes: readonly string[], returnValues = 'NONE'): void {
    this.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...attributes] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': [returnValues] },
        },
      }),
    );
  }

  /**
   * Lets a function check passwords and one-time codes (`services/sign-in.ts`): seal and open
   * TOTP seeds with the secrets key (its id in `ENV.secretsKmsKeyId`), and, for a read-only
   * function, update only the attributes sign-in writes: the failed-login counters, the spent OTP
   * step, an upgraded password hash and a re-sealed seed; and count a failed sign-in into the
   * person's security log.
   */
  allowSigningIn(table: ITable, access: TableAccess, secretsKey: IKey): void {
    this.addEnvironment(ENV.secretsKmsKeyId, secretsKey.keyArn);
    secretsKey.grant(this, 'kms:Encrypt', 'kms:Decrypt');
    if (access === 'RW') return;
    this.allowUpdating(table, SIGN_IN_ATTRIBUTES);
    this.allowUpdating(table, FAILED_SIGN_IN_EVENT_ATTRIBUTES, 'UPDATED_NEW');
  }

  /** Sets `ENV.tableName` and grants exactly the data-plane actions `access` names; once per function. */
  bindTable(table: ITable, access: TableAccess): void {
    bindTable(this, this.executionRole, table, access);
  }
}
