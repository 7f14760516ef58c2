import { ArnFormat, CfnOutput, type CfnResource, NestedStack, type RemovalPolicy, Token } from 'aws-cdk-lib';
import type { IRestApi } from 'aws-cdk-lib/aws-apigateway';
import { type ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { Bucket, type IBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { acceptsTokens, type Route, routeId, signsIn } from '#shared/routes';
import { ApiFunction } from './api-function.ts';
import { publicUrlEnvironment } from './function-defaults.ts';
import type { ImportWorkflow } from './import-workflow.ts';
import type { LfsObjects } from './lfs-objects.ts';
import { fromParent } from './parent-parameters.ts';
import { httpHandlerEntry } from './paths.ts';
import { type RouteGroup, routeStackId } from './route-groups.ts';
import { grantPutSecurityEvents } from './security-events.ts';
import type { WebhookDelivery } from './webhook-delivery.ts';
import type { WorkerNetwork } from './worker-network.ts';

export interface RouteFunctionsProps {
  readonly group: RouteGroup;
  /** The group's routes (`groupRoutes`). */
  readonly routes: readonly Route[];
  readonly table: ITable;
  readonly secretsKey: IKey;
  /** The API whose methods invoke the functions, and the stage name as a literal (see below). */
  readonly restApi: IRestApi;
  readonly stageName: string;
  readonly environment: Readonly<Record<string, string>>;
  /** The web origin the public URL variables are built from (`ServiceRestApiProps.webOrigin`). */
  readonly webOrigin?: string;
  readonly logRemovalPolicy: RemovalPolicy;
  readonly importWorkflow?: ImportWorkflow;
  readonly network?: WorkerNetwork;
  readonly lfsObjects?: LfsObjects;
  readonly webhookDelivery?: WebhookDelivery;
}

/**
 * One route group's functions in a nested stack: per route an `ApiFunction` (function, role,
 * policy, log group) and the permission letting its API Gateway method invoke it. The API's
 * resources and methods stay in the parent stack.
 *
 * What crosses the boundary is named: parameters `TableName` and `RestApiId`, `WebOrigin` (unless a
 * literal custom domain), `SecretsKeyArn`, `ImportStateMachineArn` and `LfsBucketName` (only when a
 * route of the group needs them), and one output per route,
 * `<RouteId>Arn`, the function's ARN for its method's integration. Named parameters also keep the
 * cdk-nag acknowledgements stable: the table's index wildcard reads `…:table/<TableName>/index/*`. Functions in
 * the VPC reach the network's subnets, security group and file system through references CDK
 * passes itself. The permissions name the stage by its literal name, not by a reference to the
 * Stage: the Stage depends on the Deployment, which depends on the methods, which depend on this
 * stack's outputs.
 */
export class RouteFunctions extends NestedStack {
  /** The group's functions by `routeId(route)`. */
  public readonly functions: ReadonlyMap<string, ApiFunction>;

  constructor(scope: Construct, props: RouteFunctionsProps) {
    const id = routeStackId(props.group);
    super(scope, id, { description: `${props.group.description} (route functions)` });
    // The console names a nested stack `<parent>-<logical id>-<suffix>`: keep the id short.
    (this.nestedStackResource as CfnResource).overrideLogicalId(id);

    // By name: the ARN is built from it (same account and region), so one parameter serves both.
    const table = Table.fromTableAttributes(this, 'Table', {
      tableName: fromParent(this, 'TableName', props.table.tableName, 'The service table'),
      // The data layer queries the table's global secondary indexes by name.
      grantIndexPermissions: true,
    });
    let secretsKey: IKey | undefined;
    const key = (): IKey => {
      secretsKey ??= Key.fromKeyArn(
        this,
        'SecretsKey',
        fromParent(this, 'SecretsKeyArn', props.secretsKey.keyArn, 'Seals TOTP seeds and import credentials'),
      );
      return secretsKey;
    };
    let lfsBucket: IBucket | undefined;
    const bucket = (lfsObjects: LfsObjects): IBucket => {
      lfsBucket ??= Bucket.fromBucketName(
        this,
        'LfsBucket',
        fromParent(this, 'LfsBucketName', lfsObjects.bucket.bucketName, 'The Git LFS objects bucket'),
      );
      return lfsBucket;
    };
    const restApiId = fromParent(
      this,
      'RestApiId',
      props.restApi.restApiId,
      'The REST API invoking the functions',
    );

    const webOrigin =
      props.webOrigin === undefined || !Token.isUnresolved(props.webOrigin)
        ? props.webOrigin
        : fromParent(this, 'WebOrigin', props.webOrigin, 'The service web origin (https://host)');
    const environment = {
      ...props.environment,
      ...(webOrigin === undefined ? {} : publicUrlEnvironment(webOrigin)),
    };

    const functions = new Map<string, ApiFunction>();
    for (const route of props.routes) {
      const id = routeId(route);
      const uses = new Set(route.uses ?? []);
      const fn = new ApiFunction(this, id, {
        entry: httpHandlerEntry(route.handler),
        description: `${route.method} ${route.path}`,
        environment,
        logRemovalPolicy: props.logRemovalPolicy,
        ...(uses.has('repositories') ? { network: required(props.network, route, 'network').api } : {}),
      });
      fn.bindTable(table, route.table);
      if (uses.has('import-workflow')) {
        const workflow = required(props.importWorkflow, route, 'importWorkflow');
        workflow.grantControl(fn, {
          stateMachineArn: fromParent(
            this,
            'ImportStateMachineArn',
            workflow.stateMachine.stateMachineArn,
            'The source import workflow',
          ),
          secretsKey: key(),
        });
      }
      if (uses.has('import-credentials'))
        required(props.importWorkflow, route, 'importWorkflow').grantOpeningCredentials(fn, key());
      if (uses.has('lfs-objects')) {
        const lfsObjects = required(props.lfsObjects, route, 'lfsObjects');
        lfsObjects.grantObjects(fn, bucket(lfsObjects));
      }
      if (uses.has('webhooks')) {
        const webhooks = required(props.webhookDelivery, route, 'webhookDelivery');
        webhooks.grantUse(fn, {
          functionArn: fromParent(
            this,
            'WebhookDeliveryArn',
            webhooks.function.functionArn,
            'The webhook delivery function',
          ),
          secretsKey: key(),
        });
      }
      if (route.table === 'RO' && acceptsTokens(route)) fn.allowRecordingTokenUse(table);
      if (signsIn(route)) fn.allowSigningIn(table, route.table, key());
      grantPutSecurityEvents(fn);
      fn.addPermission('ApiGatewayInvoke', {
        principal: new ServicePrincipal('apigateway.amazonaws.com'),
        // The method's ARN (`Method.methodArn`): path variables become `*`.
        sourceArn: this.formatArn({
          service: 'execute-api',
          resource: restApiId,
          resourceName: `${props.stageName}/${route.method}${route.path.replace(/\{[^}]*\}/g, '*')}`,
          arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
        }),
      });
      new CfnOutput(this, `${id}Arn`, {
        description: `${route.method} ${route.path}`,
        value: fn.functionArn,
      });
      functions.set(id, fn);
    }
    this.functions = functions;
  }

  /** The ARN of a route's function as the parent stack sees it (this stack's output). */
  functionArnInParent(route: Pick<Route, 'handler'>): string {
    const id = routeId(route);
    if (!this.functions.has(id)) throw new Error(`${this.node.path} has no function for ${route.handler}`);
    return Token.asString((this.nestedStackResource as CfnResource).getAtt(`Outputs.${id}Arn`));
  }
}

function required<T>(value: T | undefined, route: Route, prop: string): T {
  if (value === undefined) {
    throw new Error(
      `${route.method} ${route.path} uses ${(route.uses ?? []).join(', ')}: ServiceRestApi needs ${prop}`,
    );
  }
  return value;
}
