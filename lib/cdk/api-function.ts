import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { CfnTable, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { TABLE } from '#data/table';
import { ENV } from '#shared/config';
import type { Route } from '#shared/routes';
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

/** Least-privilege access to the table: the same vocabulary as the route table's `table` column. */
export type TableAccess = Route['table'];

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
}

/**
 * ESM bundles still contain CommonJS dependencies that call `require`; esbuild's shim needs a real
 * `require` in scope. Aliased so that it cannot collide with a bundled module's own imports.
 */
const ESM_REQUIRE_BANNER =
  "import { createRequire as __houseCreateRequire } from 'node:module'; const require = __houseCreateRequire(import.meta.url);";

/**
 * The house Lambda function: every function of the service is one of these, so runtime,
 * architecture, bundling, logging and tracing are decided here once. Table access is granted only
 * through `bindTable`, which sets the table name and the matching IAM grant together.
 */
export class ApiFunction extends NodejsFunction {
  /** The handler module this function was bundled from. */
  public readonly entry: string;
  private readonly executionRole: Role;
  private boundTable: ITable | undefined;

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    // An explicit role instead of the default one with AWSLambdaBasicExecutionRole: that managed
    // policy may create and write any log group, this role may write only to its own.
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: props.description,
    });
    logGroup.grantWrite(role);

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
      environment: {
        ...props.environment,
        // SDK v3 already keeps connections alive; kept for any dependency still on SDK v2.
        AWS_NODEJS_CONNECTION_REUSE_ENABLED: '1',
        // Stack traces from the minified bundle point at the TypeScript sources.
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        format: OutputFormat.ESM,
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        // The Node.js 22 runtime ships SDK v3; bundling it would only grow cold starts.
        externalModules: ['@aws-sdk/*'],
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
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Tracing.ACTIVE grants xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions (X-Ray service authorization reference).',
    });
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
  private allowUpdating(table: ITable, attributes: readonly string[]): void {
    this.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...attributes] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
        },
      }),
    );
  }

  /**
   * Lets a function check passwords and one-time codes (`services/sign-in.ts`): seal and open
   * TOTP seeds with the secrets key (its id in `ENV.secretsKmsKeyId`), and, for a read-only
   * function, update only the attributes sign-in writes: the failed-login counters, the spent OTP
   * step, an upgraded password hash and a re-sealed seed.
   */
  allowSigningIn(table: ITable, access: TableAccess, secretsKey: IKey): void {
    this.addEnvironment(ENV.secretsKmsKeyId, secretsKey.keyArn);
    secretsKey.grant(this, 'kms:Encrypt', 'kms:Decrypt');
    if (access === 'RW') return;
    this.allowUpdating(table, SIGN_IN_ATTRIBUTES);
  }

  /** Sets `ENV.tableName` and grants exactly the data-plane actions `access` names; once per function. */
  bindTable(table: ITable, access: TableAccess): void {
    if (this.boundTable) throw new Error(`${this.node.path} is already bound to a table`);
    this.boundTable = table;
    this.addEnvironment(ENV.tableName, table.tableName);
    if (access === 'RW') table.grantReadWriteData(this);
    else table.grantReadData(this);

    // For a table with indexes the grants also name `<table arn>/index/*`.
    const cfnTable = table.node.defaultChild;
    if (cfnTable instanceof CfnTable) {
      const stack = Stack.of(cfnTable);
      const tableLogicalId = stack.resolve(stack.getLogicalId(cfnTable)) as string;
      Validations.of(this.executionRole).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${tableLogicalId}.Arn>/index/*]`,
        reason:
          'The wildcard spans only the indexes of this one table (data/table.ts), which the data layer queries by name; the actions are the read-only or read-write data set the route needs.',
      });
    }
  }
}
