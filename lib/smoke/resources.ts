import { STAGE_NAME } from '#cdk/rest-api';
import { groupRoutes, routeStackId } from '#cdk/route-groups';
import { type Route, routeId } from '#shared/routes';

/**
 * A resource of the deployed stack that a failed check points at, named as the stack's Resources
 * tab in the CloudFormation console lists it: CDK's logical id is the construct path without
 * slashes plus an 8-character hash, so the name is given as that prefix and `…`.
 * `test/infra/smoke-resources.test.ts` checks each name against the synthesized template.
 */
export interface StackResource {
  /** What the console calls it, e.g. `CloudFront distribution`. */
  readonly kind: string;
  readonly type: string;
  /** The logical id without CDK's hash. */
  readonly logicalId: string;
  /** The nested stack's logical id in the parent (the route functions), absent for the parent's own resources. */
  readonly nestedStack?: string;
}

export const RESOURCES = {
  distribution: {
    kind: 'CloudFront distribution',
    type: 'AWS::CloudFront::Distribution',
    logicalId: 'WebDistribution',
  },
  // The distribution's second origin: the first is the API stage (its default behaviour).
  vpcOrigin: {
    kind: 'CloudFront VPC origin',
    type: 'AWS::CloudFront::VpcOrigin',
    logicalId: 'WebDistributionOrigin2VpcOrigin',
  },
  stage: {
    kind: 'API Gateway stage',
    type: 'AWS::ApiGateway::Stage',
    logicalId: `ApiRestApiDeploymentStage${STAGE_NAME}`,
  },
  table: { kind: 'DynamoDB table', type: 'AWS::DynamoDB::Table', logicalId: 'Table' },
  gitService: { kind: 'ECS service', type: 'AWS::ECS::Service', logicalId: 'GitFrontendService' },
  gitLogs: { kind: 'log group', type: 'AWS::Logs::LogGroup', logicalId: 'GitFrontendLogs' },
  loadBalancer: {
    kind: 'load balancer',
    type: 'AWS::ElasticLoadBalancingV2::LoadBalancer',
    logicalId: 'GitFrontendLoadBalancer',
  },
  targetGroup: {
    kind: 'target group',
    type: 'AWS::ElasticLoadBalancingV2::TargetGroup',
    logicalId: 'GitFrontendLoadBalancerHttpTasksGroup',
  },
  loadBalancerSecurityGroup: {
    kind: 'security group',
    type: 'AWS::EC2::SecurityGroup',
    logicalId: 'GitFrontendLoadBalancerSecurityGroup',
  },
  // Finds CloudFront-VPCOrigins-Service-SG in the VPC at deployment; the load balancer's rule admits its id.
  vpcOriginsSecurityGroupLookup: {
    kind: 'custom resource',
    type: 'Custom::AWS',
    logicalId: 'WebVpcOriginsSecurityGroup',
  },
} as const satisfies Record<string, StackResource>;

/** The Lambda function API Gateway invokes for a route, in its route group's nested stack. */
export function routeFunction(route: Route): StackResource {
  // groupRoutes throws for a route of no group, and API Gateway routes all have one.
  const [group] = groupRoutes([route]).keys();
  if (group === undefined) throw new Error(`${route.method} ${route.path} is in no route group`);
  return {
    kind: `Lambda function (${route.method} ${route.path})`,
    type: 'AWS::Lambda::Function',
    logicalId: routeId(route),
    nestedStack: routeStackId(group),
  };
}

/** The stack holding a resource: `stack OAuthImportService` or `nested stack OAuthImportService-WebRoutes-…`. */
export const stackOf = (resource: StackResource, stackName: string): string =>
  resource.nestedStack === undefined
    ? `stack ${stackName}`
    : `nested stack ${stackName}-${resource.nestedStack}-…`;

/** `CloudFront distribution WebDistribution… (stack OAuthImportService)`. */
export const named = (resource: StackResource, stackName: string): string =>
  `${resource.kind} ${resource.logicalId}… (${stackOf(resource, stackName)})`;
