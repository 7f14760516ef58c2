import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  AuthorizationType,
  AwsIntegration,
  EndpointType,
  LogGroupLogDestination,
  type Method,
  MethodLoggingLevel,
  MockIntegration,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { BINARY_MEDIA_TYPES } from '#shared/binary-media';
import { corsPreflightHeaders } from '#shared/cors';
import { API_PREFIX, type HttpMethod, ROUTES, type Route, routeId } from '#shared/routes';
import type { ApiFunction } from './api-function.ts';
import { GATEWAY_CONTENT_TYPE, GATEWAY_RESPONSES } from './gateway-responses.ts';
import type { ImportWorkflow } from './import-workflow.ts';
import type { LfsObjects } from './lfs-objects.ts';
import { RouteFunctions } from './route-functions.ts';
import { groupRoutes, ROUTE_GROUPS, type RouteGroup } from './route-groups.ts';
import type { WebhookDelivery } from './webhook-delivery.ts';
import type { WorkerNetwork } from './worker-network.ts';

export interface ServiceRestApiProps {
  readonly table: ITable;
  /** Seals TOTP seeds; granted only to the functions that sign users in. */
  readonly secretsKey: IKey;
  /** Rows served by the Git front end (`servedBy: 'git-frontend'`) are left out. @default ROUTES */
  readonly routes?: readonly Route[];
  /** Which nested stack holds which routes' functions. @default ROUTE_GROUPS */
  readonly groups?: readonly RouteGroup[];
  /** Configuration variables every route function gets (names from `ENV`). */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * The service's web origin (`https://host`), from which every function gets the public URL
   * variables (`publicUrlEnvironment`); a token reaches the nested stacks as their `WebOrigin`
   * parameter. Unset (tests of the construct alone): handlers derive the URLs per request.
   */
  readonly webOrigin?: string;
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
  /** For the API's and the functions' log groups. */
  readonly logRemovalPolicy: RemovalPolicy;
  /** Whether to set the region's account-wide API Gateway CloudWatch Logs role. */
  readonly manageCloudWatchRole: boolean;
  /** An existing regional WAFv2 web ACL to associate with the stage. */
  readonly webAclArn?: string;
  /** Drives source imports: required when a route `uses` `import-workflow`. */
  readonly importWorkflow?: ImportWorkflow;
  /** Places functions at the hosted repositories: required when a route `uses` `repositories`. */
  readonly network?: WorkerNetwork;
  /** The Git LFS objects bucket: required when a route `uses` `lfs-objects`. */
  readonly lfsObjects?: LfsObjects;
  /** The webhook delivery function: required when a route `uses` `webhooks`. */
  readonly webhookDelivery?: WebhookDelivery;
}

/** Part of every URL on the execute-api domain; the web distribution's origin path. */
export const STAGE_NAME = 'prod';

/** Whether API Gateway serves a route (with a Lambda function), rather than the Git front end. */
export const servedByApi = (route: Pick<Route, 'servedBy'>): boolean => (route.servedBy ?? 'api') === 'api';

/** The rows of the route table the REST API serves. */
export const API_ROUTES: readonly Route[] = ROUTES.filter(servedByApi);

/** One JSON object per request; never headers or bodies (they carry passwords and tokens). */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
    ip: AccessLogField.contextIdentitySourceIp(),
    requestTime: AccessLogField.contextRequestTime(),
    method: AccessLogField.contextHttpMethod(),
    path: AccessLogField.contextPath(),
    resourcePath: AccessLogField.contextResourcePath(),
    protocol: AccessLogField.contextProtocol(),
    status: AccessLogField.contextStatus(),
    responseLength: AccessLogField.contextResponseLength(),
    latency: AccessLogField.contextResponseLatency(),
    integrationLatency: AccessLogField.contextIntegrationLatency(),
    errorType: AccessLogField.contextErrorResponseType(),
    userAgent: AccessLogField.contextIdentityUserAgent(),
    xrayTraceId: AccessLogField.contextXrayTraceId(),
  }),
);

/**
 * Fails synthesis on route tables API Gateway would reject at deploy time: a repeated
 * method and path, two routes whose functions would share an id, or sibling path variables with
 * different names (`/repos/{owner}` next to `/repos/{org}`).
 */
export function assertDeployableRoutes(routes: readonly Route[]): void {
  const seen = new Set<string>();
  const ids = new Map<string, string>();
  const variables = new Map<string, string>();
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    if (seen.has(key)) throw new Error(`route ${key} is defined twice`);
    seen.add(key);
    const id = routeId(route);
    const other = ids.get(id);
    if (other !== undefined && other !== route.handler) {
      throw new Error(`handlers ${other} and ${route.handler} both map to function id ${id}`);
    }
    ids.set(id, route.handler);
    const segments = route.path.split('/').filter(Boolean);
    segments.forEach((segment, index) => {
      if (!segment.startsWith('{')) return;
      const parent = `/${segments.slice(0, index).join('/')}`;
      const sibling = variables.get(parent);
      if (sibling !== undefined && sibling !== segment) {
        throw new Error(
          `${parent} has two path variables, ${sibling} and ${segment}; API Gateway allows one`,
        );
      }
      variables.set(parent, segment);
    });
  }
}

/**
 * The REST API: one API Gateway method and one `ApiFunction` per route-table row it serves (Lambda proxy
 * integration, so the handler sees the raw request and shapes the whole response), access and
 * execution logging, X-Ray tracing, stage throttling and GitHub-shaped gateway errors. The
 * functions are in nested stacks, one per route group (`RouteFunctions`, `route-groups.ts`); the
 * API, its resources and methods are in the stack of this construct.
 */
export class ServiceRestApi extends Construct {
  public readonly api: RestApi;
  /** Route functions by `routeId(route)`. */
  public readonly functions: ReadonlyMap<string, ApiFunction>;
  /** The nested stacks holding them, by route group name. */
  public readonly routeStacks: ReadonlyMap<string, RouteFunctions>;
  public readonly accessLogs: LogGroup;

  constructor(scope: Construct, id: string, props: ServiceRestApiProps) {
    super(scope, id);
    const routes = (props.routes ?? ROUTES).filter(servedByApi);
    assertDeployableRoutes(routes);

    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy,
    });

    this.api = new RestApi(this, 'RestApi', {
      description: 'GitHub REST API v3: authorizations, OAuth web flow and source imports',
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // Git packfiles and LFS objects pass as bytes (base64 between API Gateway and Lambda).
      binaryMediaTypes: [...BINARY_MEDIA_TYPES],
      cloudWatchRole: props.manageCloudWatchRole,
      // The role is an account-wide setting other APIs may rely on; never remove it with this stack.
      ...(props.manageCloudWatchRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      deployOptions: {
        stageName: STAGE_NAME,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: ACCESS_LOG_FORMAT,
        tracingEnabled: true,
        // Execution logs of errors only, and never request or response data.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        throttlingRateLimit: props.throttling.rateLimit,
        throttlingBurstLimit: props.throttling.burstLimit,
      },
    });

    // API Gateway creates this group on first use with no retention; owning it sets one.
    const executionLogs = new LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${STAGE_NAME}`,
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy,
    });
    this.api.deploymentStage.node.addDependency(executionLogs);

    // The functions live in one nested stack per route group (route-groups.ts); the methods here.
    const functions = new Map<string, ApiFunction>();
    const stacks = new Map<string, RouteFunctions>();
    const routeStacks = new Map<string, RouteFunctions>();
    for (const [group, members] of groupRoutes(routes, props.groups ?? ROUTE_GROUPS)) {
      const stack = new RouteFunctions(this, {
        group,
        routes: members,
        table: props.table,
        secretsKey: props.secretsKey,
        restApi: this.api,
        stageName: STAGE_NAME,
        environment: props.environment,
        ...(props.webOrigin === undefined ? {} : { webOrigin: props.webOrigin }),
        logRemovalPolicy: props.logRemovalPolicy,
        ...(props.importWorkflow === undefined ? {} : { importWorkflow: props.importWorkflow }),
        ...(props.network === undefined ? {} : { network: props.network }),
        ...(props.lfsObjects === undefined ? {} : { lfsObjects: props.lfsObjects }),
        ...(props.webhookDelivery === undefined ? {} : { webhookDelivery: props.webhookDelivery }),
      });
      routeStacks.set(group.name, stack);
      for (const [id, fn] of stack.functions) {
        functions.set(id, fn);
        stacks.set(id, stack);
      }
    }
    for (const route of routes) {
      const stack = stacks.get(routeId(route)) as RouteFunctions;
      const method = this.api.root
        .resourceForPath(route.path)
        .addMethod(route.method, lambdaProxy(stack.functionArnInParent(route)), {
          authorizationType: AuthorizationType.NONE,
        });
      acknowledgeInFunctionAuthentication(method);
    }
    // CORS preflights of the `cors` routes: a mock integration in API Gateway, no function (shared/cors.ts).
    const corsMethods = new Map<string, HttpMethod[]>();
    for (const route of routes)
      if (route.cors) corsMethods.set(route.path, [...(corsMethods.get(route.path) ?? []), route.method]);
    for (const [path, methods] of corsMethods) {
      const headers = corsPreflightHeaders(methods);
      const preflight = this.api.root.resourceForPath(path).addMethod(
        'OPTIONS',
        new MockIntegration({
          requestTemplates: { 'application/json': '{"statusCode": 204}' },
          integrationResponses: [
            {
              statusCode: '204',
              responseParameters: Object.fromEntries(
                Object.entries(headers).map(([name, value]) => [
                  `method.response.header.${name}`,
                  `'${value}'`,
                ]),
              ),
            },
          ],
        }),
        {
          authorizationType: AuthorizationType.NONE,
          methodResponses: [
            {
              statusCode: '204',
              responseParameters: Object.fromEntries(
                Object.keys(headers).map((name) => [`method.response.header.${name}`, true]),
              ),
            },
          ],
        },
      );
      acknowledgeInFunctionAuthentication(preflight);
    }
    this.functions = functions;
    this.routeStacks = routeStacks;

    // API Gateway's own errors in GitHub's shape (`gateway-responses.ts`, which the local gateway answers from too).
    for (const response of GATEWAY_RESPONSES) {
      const headers = { 'Content-Type': GATEWAY_CONTENT_TYPE, ...response.headers };
      this.api.addGatewayResponse(response.id, {
        type: ResponseType.of(response.type),
        ...(response.statusCode === undefined ? {} : { statusCode: String(response.statusCode) }),
        responseHeaders: Object.fromEntries(
          Object.entries(headers).map(([name, value]) => [name, `'${value}'`]),
        ),
        templates: { 'application/json': JSON.stringify(response.body) },
      });
    }

    if (props.webAclArn !== undefined) {
      new CfnWebACLAssociation(this, 'WebAcl', {
        resourceArn: this.api.deploymentStage.stageArn,
        webAclArn: props.webAclArn,
      });
    } else {
      Validations.of(this.api.deploymentStage).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason: `No web ACL given (context webAclArn); the stage is rate limited by its own throttling. Production deployments pass an existing regional WAFv2 web ACL.`,
      });
    }

    Validations.of(this.api.node.defaultChild ?? this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        "Each route's function validates its request against the route's schema and answers with GitHub's 422 body (errors[] with resource/field/code); an API Gateway validator would answer first, in another format.",
    });
    const cloudWatchRole = this.api.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole !== undefined) {
      Validations.of(cloudWatchRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "The account-wide API Gateway logging role serves every API in the region, so it cannot be scoped to this stack's log groups; AWS documents this managed policy for exactly this role.",
      });
    }
    // The stack's own ApiUrl output replaces the RestApi's hash-named `Endpoint` output.
    this.api.node.tryRemoveChild('Endpoint');
  }

  /** The `{base_url}` GitHub clients are configured with, on the execute-api domain. */
  get baseUrl(): string {
    return this.api.urlForPath(API_PREFIX);
  }
}

/**
 * A Lambda proxy integration by function ARN: what `LambdaIntegration` configures, without the
 * invoke permission it would add to this (the parent) stack; `RouteFunctions` adds that permission
 * next to the function.
 */
function lambdaProxy(functionArn: string): AwsIntegration {
  return new AwsIntegration({
    proxy: true,
    service: 'lambda',
    path: `2015-03-31/functions/${functionArn}/invocations`,
  });
}

function acknowledgeInFunctionAuthentication(method: Method): void {
  const validations = Validations.of(method);
  validations.acknowledge({
    id: 'AwsSolutions-APIG4',
    reason:
      "GitHub's protocol authenticates in the function: HTTP Basic (login and password with OTP, or client_id and client_secret) and OAuth tokens, with GitHub's 401/404 semantics and scope headers, which an API Gateway authorizer cannot reproduce; anonymous routes are public by design.",
  });
  validations.acknowledge({
    id: 'AwsSolutions-COG4',
    reason:
      'Callers are GitHub users, OAuth applications and tokens kept in the service table, not Cognito user pool identities; the function authenticates them (see AwsSolutions-APIG4).',
  });
}
