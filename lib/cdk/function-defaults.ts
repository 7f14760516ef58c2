import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { FileSystem as LambdaFileSystem, Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct, IConstruct } from 'constructs';
import { ENV } from '#shared/config';
import { API_PREFIX, type Route } from '#shared/routes';

/**
 * The house decisions every function of the service shares, whether zip-bundled (`ApiFunction`)
 * or a container image (`WorkerImageFunction`): its own log group and a role that may write only
 * there, the table bound through `bindTable`, and the VPC attachment.
 */

/** Least-privilege access to the table: the same vocabulary as the route table's `table` column. */
export type TableAccess = Route['table'];

/** Where a function that reaches the file system sits: private subnets, its security groups, the mount. */
export interface FunctionNetwork {
  readonly vpc: IVpc;
  readonly vpcSubnets: SubnetSelection;
  readonly securityGroups: readonly ISecurityGroup[];
  /** The EFS access point, mounted at `/mnt/data`. */
  readonly filesystem: LambdaFileSystem;
  /** The directories on the mount (`ENV.importWorkDir`, `ENV.repositoriesDir`). */
  readonly environment: Readonly<Record<string, string>>;
}

export interface FunctionExecution {
  readonly logGroup: LogGroup;
  readonly role: Role;
}

/**
 * The function's log group (one month) and an explicit role instead of the default one with
 * AWSLambdaBasicExecutionRole: that managed policy may create and write any log group, this role
 * may write only to its own.
 */
export function functionExecution(
  scope: Construct,
  id: string,
  props: { readonly description?: string; readonly logRemovalPolicy?: RemovalPolicy },
): FunctionExecution {
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
  });
  const role = new Role(scope, `${id}Role`, {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: props.description,
  });
  logGroup.grantWrite(role);
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'Only actions that support no resource-level permissions use Resource "*": xray:PutTraceSegments and xray:PutTelemetryRecords (Tracing.ACTIVE); for functions in the VPC the network-interface actions Lambda documents with "*"; for functions mounting EFS elasticfilesystem:ClientMount, conditioned on the one access point; for functions driving imports states:SendTaskSuccess/SendTaskFailure/SendTaskHeartbeat, whose task token is the authority.',
  });
  return { logGroup, role };
}

/**
 * What Lambda needs to attach a function to the VPC, written out because an explicit role does not
 * get AWSLambdaVPCAccessExecutionRole (a managed policy cdk-nag rightly flags). The actions are the
 * ones that policy holds; Lambda documents them with Resource "*".
 */
export function allowNetworkInterfaces(role: Role): void {
  role.addToPolicy(
    new PolicyStatement({
      actions: [
        'ec2:CreateNetworkInterface',
        'ec2:DescribeNetworkInterfaces',
        'ec2:DescribeSubnets',
        'ec2:DeleteNetworkInterface',
        'ec2:AssignPrivateIpAddresses',
        'ec2:UnassignPrivateIpAddresses',
      ],
      resources: ['*'],
    }),
  );
}

const boundTables = new WeakMap<LambdaFunction, ITable>();

/**
 * Sets `ENV.tableName` and grants exactly the data-plane actions `access` names; once per function.
 * The table must be one of the function's own stack (in a nested stack, the table imported from
 * parameters, as `RouteFunctions` does): the index wildcard's acknowledgement names the table ARN
 * as that stack's template spells it.
 */
export function bindTable(fn: LambdaFunction, role: Role, table: ITable, access: TableAccess): void {
  if (boundTables.has(fn)) throw new Error(`${fn.node.path} is already bound to a table`);
  const stack = Stack.of(fn);
  if (Stack.of(table) !== stack) {
    throw new Error(
      `${fn.node.path}: bind a table of the function's own stack (import it there from parameters)`,
    );
  }
  boundTables.set(fn, table);
  fn.addEnvironment(ENV.tableName, table.tableName);
  if (access === 'RW') table.grantReadWriteData(fn);
  else table.grantReadData(fn);
  acknowledgeTableIndexes(role, table);
}

/** The grants of `table.grant*Data` also name `<table arn>/index/*` (a table with indexes, or imported with them). */
export function acknowledgeTableIndexes(role: IConstruct, table: ITable): void {
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagReference(Stack.of(role).resolve(table.tableArn))}/index/*]`,
    reason:
      'The wildcard spans only the indexes of this one table (data/table.ts), which the data layer queries by name; the actions are the read-only or read-write data set the route needs.',
  });
}

/**
 * The public URL variables every function and the Git front end get, from the service's web
 * origin (`https://host`: the custom domain, or the web distribution's own name). One origin serves
 * the REST API under `API_PREFIX`, the pages and the hosted repositories.
 */
export function publicUrlEnvironment(origin: string): Record<string, string> {
  return {
    [ENV.baseUrl]: `${origin}${API_PREFIX}`,
    [ENV.authUrl]: origin,
    [ENV.settingsUrl]: origin,
    [ENV.importUrl]: origin,
  };
}

/**
 * A resolved value as cdk-nag writes it in a finding id: strings as they are, `Ref` as `<Id>`,
 * `Fn::GetAtt` as `<Id.Attribute>`, `Fn::Join` joined.
 */
export function nagReference(resolved: unknown): string {
  if (typeof resolved === 'string') return resolved;
  const value = resolved as { Ref?: unknown; 'Fn::GetAtt'?: unknown; 'Fn::Join'?: unknown };
  if (typeof value.Ref === 'string') return `<${value.Ref}>`;
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt) && getAtt.length === 2) return `<${getAtt[0]}.${getAtt[1]}>`;
  const join = value['Fn::Join'];
  if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
    return join[1].map(nagReference).join(join[0]);
  }
  throw new Error(`cannot name ${JSON.stringify(resolved)} as cdk-nag does`);
}
