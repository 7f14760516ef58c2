import { Aws, Duration, Fn, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { IRestApi } from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  type BehaviorOptions,
  CachePolicy,
  Distribution,
  Function as EdgeFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  PriceClass,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, VpcOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { CfnSecurityGroupIngress, Peer, Port } from 'aws-cdk-lib/aws-ec2';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import type { Route } from '#shared/routes';
import type { GitFrontend } from './git-frontend.ts';
import { VIEWER_REQUEST_FUNCTION_SOURCE } from './viewer-request-function.ts';

/**
 * The security group CloudFront creates in a VPC with the first VPC origin there and puts on the
 * network interfaces its connections to those origins come from (AWS's "Restrict access with VPC
 * origins"). One per VPC, AWS-managed: the stack only reads its id.
 */
export const VPC_ORIGINS_SECURITY_GROUP = 'CloudFront-VPCOrigins-Service-SG';

/** The load balancer's listener port (`git-frontend.ts`), where the VPC origin connects over HTTP. */
const GIT_ORIGIN_PORT = 80;

/**
 * How long CloudFront waits for the next bytes from the Git front end. Git sends keep-alive
 * packets every 5 s while `pack-objects` or `index-pack` works (`uploadpack.keepAlive`,
 * `receive.keepAlive`), so a long transfer never idles this long; there is no limit on a whole
 * response (no response completion timeout is set).
 */
const GIT_READ_TIMEOUT = Duration.seconds(60);

export interface WebDistributionProps {
  /** The REST API (regional), reached on its execute-api domain at `stageName`. */
  readonly restApi: IRestApi;
  readonly stageName: string;
  readonly gitFrontend: GitFrontend;
  /** Paths the Git front end serves, from the route table (`GIT_FRONTEND_ROUTES`). */
  readonly gitRoutes: readonly Route[];
  /** Every other route: checked not to match a Git path pattern. */
  readonly apiRoutes: readonly Route[];
  /** A custom domain: its host name and an ACM certificate for it in us-east-1. */
  readonly domain?: { readonly name: string; readonly certificateArn: string };
  /** A WAFv2 web ACL of scope CLOUDFRONT. */
  readonly webAclArn?: string;
  /** For the log group of the lookup of CloudFront's VPC origins security group. */
  readonly logRemovalPolicy: RemovalPolicy;
}

/**
 * A route path as a CloudFront path pattern: every `{parameter}` becomes `*` (which also spans
 * `/`, so a pattern can only be wider than its route, never narrower).
 */
export const pathPattern = (route: Pick<Route, 'path'>): string => route.path.replace(/\{\w+\}/g, '*');

/** Whether a CloudFront path pattern (`*` any characters, `?` one) matches a request path. */
export function patternMatches(pattern: string, path: string): boolean {
  const regex = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${regex}$`).test(path);
}

/**
 * The Git path patterns, one per distinct path; throws when one would also take an API route
 * (its path with each parameter a plain segment), which would then answer 404 from the front end.
 */
export function gitPathPatterns(gitRoutes: readonly Route[], apiRoutes: readonly Route[]): string[] {
  const patterns = [...new Set(gitRoutes.map(pathPattern))];
  for (const route of apiRoutes) {
    const sample = route.path.replace(/\{\w+\}/g, 'x');
    const taken = patterns.find((pattern) => patternMatches(pattern, sample));
    if (taken !== undefined) {
      throw new Error(`${route.method} ${route.path} would go to the Git front end (path pattern ${taken})`);
    }
  }
  return patterns;
}

/**
 * The service's one web origin in AWS: a CloudFront distribution whose default behaviour is the
 * REST API on API Gateway (the API, the pages, import control) and whose Git paths, one behaviour
 * per path of the route table's Git rows, go to the Git front end's internal load balancer as a
 * VPC origin, so the load balancer has no public address. TLS ends here: on `*.cloudfront.net`
 * without a custom domain (synthesis needs no domain), or on `publicUrl`'s host with its
 * certificate. Nothing is cached; every header, cookie and query string is passed on (the Host
 * header only to the Git front end: API Gateway needs its own).
 */
export class WebDistribution extends Construct {
  public readonly distribution: Distribution;

  constructor(scope: Construct, id: string, props: WebDistributionProps) {
    super(scope, id);

    const apiOrigin = new HttpOrigin(
      // The API's id, not its URL: the URL names the stage, which depends on every method.
      Fn.join('', [props.restApi.restApiId, '.execute-api.', Aws.REGION, '.', Aws.URL_SUFFIX]),
      {
        originPath: `/${props.stageName}`,
        protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
        originSslProtocols: [OriginSslPolicy.TLS_V1_2],
        // API Gateway's integration timeout is 29 s.
        readTimeout: Duration.seconds(30),
      },
    );
    const gitOrigin = VpcOrigin.withApplicationLoadBalancer(props.gitFrontend.loadBalancer, {
      // Inside the VPC, from CloudFront's network interfaces: the load balancer has no certificate
      // without a domain, and TLS already ended at the edge.
      protocolPolicy: OriginProtocolPolicy.HTTP_ONLY,
      httpPort: GIT_ORIGIN_PORT,
      readTimeout: GIT_READ_TIMEOUT,
    });
    const passThrough = {
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      // With caching disabled the AllViewer policies may forward Authorization as well.
      cachePolicy: CachePolicy.CACHING_DISABLED,
      compress: false,
    } as const;
    const gitBehavior: BehaviorOptions = {
      origin: gitOrigin,
      ...passThrough,
      // With CloudFront's headers: `CloudFront-Viewer-Address`, by which the front end bounds the
      // git processes of an anonymous client (functions/git-server/server.ts).
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_AND_CLOUDFRONT_2022,
    };

    // A body whose event Lambda could not take would be its 500 (API Gateway's 413 only over
    // 10 MB): refused here with 413 instead. Git's behaviours stream any size to the front end.
    const bodyLimit = new EdgeFunction(this, 'BodyLimit', {
      code: FunctionCode.fromInline(VIEWER_REQUEST_FUNCTION_SOURCE),
      runtime: FunctionRuntime.JS_2_0,
      comment: 'API requests: 413 for a Content-Length over what a Lambda invocation can carry',
    });

    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Web origin: the REST API, the pages and the hosted repositories over Git',
      defaultBehavior: {
        origin: apiOrigin,
        ...passThrough,
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        functionAssociations: [{ function: bodyLimit, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: Object.fromEntries(
        gitPathPatterns(props.gitRoutes, props.apiRoutes).map((pattern) => [pattern, gitBehavior]),
      ),
      httpVersion: HttpVersion.HTTP2_AND_3,
      enableIpv6: true,
      // North America and Europe edges only: the cheapest class; other viewers reach those.
      priceClass: PriceClass.PRICE_CLASS_100,
      ...(props.domain === undefined
        ? {}
        : {
            domainNames: [props.domain.name],
            certificate: Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
            minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
          }),
      ...(props.webAclArn === undefined ? {} : { webAclId: props.webAclArn }),
    });
    this.acknowledge(props);
    this.admitToGitFrontend(props);
  }

  /** `https://` and the distribution's own domain name (without a custom domain). */
  get defaultOrigin(): string {
    return `https://${this.distribution.distributionDomainName}`;
  }

  /**
   * Lets the distribution's VPC origin reach the load balancer, and nothing else: the security group
   * CloudFront puts on its VPC origin network interfaces in this VPC, looked up at deployment once
   * the distribution (and with it the VPC origin, which makes CloudFront create the group) exists.
   * Its id is known only then, and synthesis stays offline.
   */
  private admitToGitFrontend(props: WebDistributionProps): void {
    const vpc = props.gitFrontend.loadBalancer.vpc;
    if (vpc === undefined) throw new Error("The Git front end's load balancer has no VPC");
    const logGroup = new LogGroup(this, 'VpcOriginsSecurityGroupLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy,
    });
    // Its own role rather than the default one with AWSLambdaBasicExecutionRole: it writes only
    // to its log group and describes security groups.
    const role = new Role(this, 'VpcOriginsSecurityGroupRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Looks up the id of ${VPC_ORIGINS_SECURITY_GROUP} in the Git front end's VPC`,
    });
    logGroup.grantWrite(role);
    const groupId = 'SecurityGroups.0.GroupId';
    const lookup = new AwsCustomResource(this, 'VpcOriginsSecurityGroup', {
      onUpdate: {
        service: 'EC2',
        action: 'describeSecurityGroups',
        parameters: {
          Filters: [
            { Name: 'group-name', Values: [VPC_ORIGINS_SECURITY_GROUP] },
            { Name: 'vpc-id', Values: [vpc.vpcId] },
          ],
        },
        // A group CloudFront made anew (after its last VPC origin here was deleted) is a new id.
        physicalResourceId: PhysicalResourceId.fromResponse(groupId),
        outputPaths: [groupId],
      },
      policy: AwsCustomResourcePolicy.fromSdkCalls({ resources: AwsCustomResourcePolicy.ANY_RESOURCE }),
      installLatestAwsSdk: false,
      role,
      logGroup,
    });
    // The group exists only once CloudFront has made the VPC origin (a child of the distribution).
    lookup.node.addDependency(this.distribution);
    Validations.of(lookup.node.findChild('CustomResourcePolicy')).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'ec2:DescribeSecurityGroups supports no resource-level permissions (AWS documents it with Resource "*"); the role can only read security groups and write its own log group.',
    });
    // A rule of its own, not one inline in the load balancer's security group: that group is
    // created before the VPC origin, and the rule only after it.
    const ingress = Peer.securityGroupId(lookup.getResponseField(groupId)).toIngressRuleConfig();
    const port = Port.tcp(GIT_ORIGIN_PORT).toRuleJson();
    new CfnSecurityGroupIngress(this, 'VpcOriginsIngress', {
      groupId: props.gitFrontend.loadBalancerSecurityGroup.securityGroupId,
      ...ingress,
      ...port,
      description: `CloudFront (the web distribution as a VPC origin): ${VPC_ORIGINS_SECURITY_GROUP}`,
    });
  }

  private acknowledge(props: WebDistributionProps): void {
    const validations = Validations.of(this.distribution);
    validations.acknowledge({
      id: 'AwsSolutions-CFR1',
      reason:
        'A developer service for users anywhere, as GitHub is: there is no country to refuse. A platform that must can attach a web ACL with geographic rules (context distributionWebAclArn).',
    });
    validations.acknowledge({
      id: 'AwsSolutions-CFR3',
      reason:
        "CloudFront's standard logs always record each request's query string, and GitHub's clients may send credentials there (?access_token=, client_id and client_secret on the application endpoints); the service writes no secret to any log. The API stage's access log records API requests by path, and the Git front end logs its own.",
    });
    if (props.webAclArn === undefined) {
      validations.acknowledge({
        id: 'AwsSolutions-CFR2',
        reason:
          'No CLOUDFRONT-scope web ACL given (context distributionWebAclArn, a web ACL in us-east-1). API requests still pass the stage throttling and its regional web ACL (webAclArn) behind the distribution; Git requests authenticate per request.',
      });
    }
    if (props.domain === undefined) {
      validations.acknowledge({
        id: 'AwsSolutions-CFR4',
        reason:
          "Without a custom domain the distribution serves *.cloudfront.net with CloudFront's default certificate, whose minimum protocol CloudFront fixes; with publicUrl and certificateArn it requires TLSv1.2_2021.",
      });
    }
  }
}
