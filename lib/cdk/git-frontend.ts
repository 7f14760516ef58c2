import { Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Peer, Port, SecurityGroup, SubnetType } from 'aws-cdk-lib/aws-ec2';
import {
  AwsLogDriverMode,
  Cluster,
  ContainerImage,
  CpuArchitecture,
  FargatePlatformVersion,
  FargateService,
  FargateTaskDefinition,
  LinuxParameters,
  LogDrivers,
  OperatingSystemFamily,
  PropagatedTagSource,
  Protocol,
} from 'aws-cdk-lib/aws-ecs';
import {
  ApplicationLoadBalancer,
  ApplicationProtocol,
  type ApplicationTargetGroup,
} from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '#shared/config';
import { type Capability, ROUTES, type Route, signsIn } from '#shared/routes';
import { RUNTIME_ENVIRONMENT } from './bundling.ts';
import { acknowledgeTableIndexes, type TableAccess } from './function-defaults.ts';
import type { LfsObjects } from './lfs-objects.ts';
import { grantPutSecurityEvents } from './security-events.ts';
import { GIT_SERVER_BUNDLE } from './worker/bundle.ts';
import { WORKER_IMAGE_CONTEXT, workerImageAsset } from './worker-image.ts';
import type { WorkerNetwork } from './worker-network.ts';

/** The routes the Git front end serves (`servedBy: 'git-frontend'`): smart HTTP and the Git LFS API. */
export const GIT_FRONTEND_ROUTES: readonly Route[] = ROUTES.filter(
  (route) => route.servedBy === 'git-frontend',
);

/** Where the server listens in the task (`PORT`; the agreed default of `functions/git-server/main.ts`). */
export const GIT_FRONTEND_PORT = 8080;
/** Answers 200 without touching DynamoDB: the load balancer's and the container's health check. */
export const GIT_FRONTEND_HEALTH_PATH = '/_health';
/** The variable the server reads its port from. */
const PORT_VARIABLE = 'PORT';

/**
 * One task's size: 1 vCPU and 2 GiB on Graviton. `git pack-objects` (clone, fetch) and
 * `git index-pack` (push) run beside the Node server; their memory grows with the number of objects
 * of the repository (about 1 GiB for a few million), not with the pack's bytes, which stream.
 */
export const GIT_FRONTEND_TASK = { cpu: 1024, memoryMiB: 2048 } as const;

/**
 * How long the load balancer lets requests to a task it removes (scale-in, deployment) finish
 * before ECS stops it: a 2 GiB clone or a 1 GiB push on a slow link. A task without requests
 * leaves at once.
 */
const DRAIN = Duration.minutes(15);
/** Fargate's longest grace between SIGTERM (the server closes gracefully) and SIGKILL. */
const STOP_TIMEOUT = Duration.seconds(120);

export interface GitFrontendProps {
  readonly network: WorkerNetwork;
  readonly table: ITable;
  /** Opens sealed TOTP seeds when a Git client signs in with a password and one-time code. */
  readonly secretsKey: IKey;
  readonly lfsObjects: LfsObjects;
  /** Configuration every function gets (vendor, public URLs); names from `ENV`. */
  readonly environment: Readonly<Record<string, string>>;
  readonly minTasks: number;
  readonly maxTasks: number;
  /** For the server's log group. */
  readonly logRemovalPolicy: RemovalPolicy;
  /** @default GIT_FRONTEND_ROUTES */
  readonly routes?: readonly Route[];
}

/**
 * The Git front end: `functions/git-server/main.ts` (the services the Lambda handlers call, with
 * streamed bodies) as an ECS Fargate service from the worker image, behind an internal Application
 * Load Balancer that only the web distribution reaches (`web-distribution.ts`). The tasks mount the
 * file system through the import workers' access point, at the same path and as the same user, and
 * scale on CPU, memory and requests per task.
 *
 * Its permissions are the union of what its routes' rows ask for (`table`, `uses`, sign-in), the
 * same rules `RouteFunctions` applies per function: the task role is least privilege for the routes
 * it serves. The execution role only pulls the image and writes the log group.
 */
export class GitFrontend extends Construct {
  public readonly cluster: Cluster;
  public readonly taskDefinition: FargateTaskDefinition;
  public readonly service: FargateService;
  public readonly loadBalancer: ApplicationLoadBalancer;
  public readonly targetGroup: ApplicationTargetGroup;
  /** Admits nothing until the distribution adds CloudFront's VPC origins security group (`web-distribution.ts`). */
  public readonly loadBalancerSecurityGroup: SecurityGroup;
  public readonly taskSecurityGroup: SecurityGroup;
  public readonly logs: LogGroup;

  constructor(scope: Construct, id: string, props: GitFrontendProps) {
    super(scope, id);
    const routes = props.routes ?? GIT_FRONTEND_ROUTES;
    if (routes.length === 0) throw new Error('GitFrontend: no route is served by the Git front end');
    const uses = new Set<Capability>(routes.flatMap((route) => route.uses ?? []));
    const access: TableAccess = routes.some((route) => route.table === 'RW') ? 'RW' : 'RO';
    const { network } = props;
    const mount = network.container;
    const vpcSubnets = { subnetType: SubnetType.PRIVATE_WITH_EGRESS };

    this.cluster = new Cluster(this, 'Cluster', { vpc: network.vpc });
    Validations.of(this.cluster).acknowledge({
      id: 'AwsSolutions-ECS4',
      reason:
        "Autoscaling and alarms use the service's CPU and memory utilization (AWS/ECS, free) and the load balancer's request counts; Container Insights would add per-task custom metrics and performance-log ingestion to the bill for no decision this one service takes.",
    });

    this.logs = new LogGroup(this, 'Logs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy,
    });

    this.taskDefinition = new FargateTaskDefinition(this, 'Task', {
      cpu: GIT_FRONTEND_TASK.cpu,
      memoryLimitMiB: GIT_FRONTEND_TASK.memoryMiB,
      runtimePlatform: {
        cpuArchitecture: CpuArchitecture.ARM64,
        operatingSystemFamily: OperatingSystemFamily.LINUX,
      },
    });
    const taskRole = this.taskDefinition.taskRole;
    const environment: Record<string, string> = {
      ...props.environment,
      ...RUNTIME_ENVIRONMENT,
      [ENV.tableName]: props.table.tableName,
      [PORT_VARIABLE]: String(GIT_FRONTEND_PORT),
      // Lambda sets it for functions; the bundled SDK reads it here too.
      AWS_REGION: Stack.of(this).region,
    };
    const container = this.taskDefinition.addContainer('Server', {
      // The import workers' image (same asset, built once); its entry point is Lambda's runtime
      // interface client, so the task names the program itself.
      image: ContainerImage.fromAsset(WORKER_IMAGE_CONTEXT, workerImageAsset()),
      entryPoint: ['node'],
      command: [`/var/task/${GIT_SERVER_BUNDLE}.mjs`],
      // An init (tini) as PID 1 above node: the git helpers of a request killed when its client goes
      // away (`vcs/process-group.ts`) are reparented to PID 1, and node, which waits only for the
      // processes it started, would keep them as zombies until the task's PIDs ran out.
      linuxParameters: new LinuxParameters(this, 'Linux', { initProcessEnabled: true }),
      // The access point's user, not root: the files the front end writes are the workers' and the
      // reverse, and git finds the repositories owned by the user it runs as.
      user: mount.user,
      environment,
      portMappings: [{ containerPort: GIT_FRONTEND_PORT, protocol: Protocol.TCP }],
      logging: LogDrivers.awsLogs({
        logGroup: this.logs,
        streamPrefix: 'git-frontend',
        // A slow CloudWatch Logs never blocks a transfer; lines beyond the buffer are dropped.
        mode: AwsLogDriverMode.NON_BLOCKING,
      }),
      stopTimeout: STOP_TIMEOUT,
      healthCheck: {
        command: [
          'CMD',
          'node',
          '-e',
          `fetch('http://127.0.0.1:${GIT_FRONTEND_PORT}${GIT_FRONTEND_HEALTH_PATH}').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`,
        ],
        interval: Duration.seconds(30),
        timeout: Duration.seconds(5),
        retries: 3,
        startPeriod: Duration.seconds(30),
      },
    });
    Validations.of(this.taskDefinition.obtainExecutionRole()).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'The execution role pulls the image and writes the log group; ecr:GetAuthorizationToken supports no resource-level permissions (AWS documents it with Resource "*"); the pull itself is limited to the asset repository.',
    });
    Validations.of(this.taskDefinition).acknowledge({
      id: 'AwsSolutions-ECS2',
      reason:
        'The variables are configuration, not secrets: names and ARNs of the table, bucket and key, public URLs, the port and mount paths; the same values the Lambda functions get as environment variables. Secrets stay sealed in the table or behind KMS.',
    });

    const task = {
      addEnvironment: (name: string, value: string) => container.addEnvironment(name, value),
      addToRolePolicy: (statement: PolicyStatement) => this.taskDefinition.addToTaskRolePolicy(statement),
      executionRole: taskRole,
    };

    // The table, as the routes' `table` column asks (one task serves them all: their union).
    if (access === 'RW') props.table.grantReadWriteData(taskRole);
    else props.table.grantReadData(taskRole);
    acknowledgeTableIndexes(taskRole, props.table);
    // Basic credentials with a one-time code open the user's sealed TOTP seed (`services/sign-in.ts`).
    if (routes.some(signsIn)) {
      task.addEnvironment(ENV.secretsKmsKeyId, props.secretsKey.keyArn);
      props.secretsKey.grant(taskRole, 'kms:Encrypt', 'kms:Decrypt');
    }
    // Every request with credentials may fail a sign-in, which the security log announces.
    grantPutSecurityEvents(taskRole);
    if (uses.has('lfs-objects')) props.lfsObjects.grantObjects(task);
    if (uses.has('import-workflow')) {
      throw new Error('GitFrontend: a route that drives imports belongs on the API, not the Git front end');
    }

    this.taskSecurityGroup = new SecurityGroup(this, 'TaskSecurityGroup', {
      vpc: network.vpc,
      description:
        'Git front end tasks: the load balancer in; HTTPS to AWS APIs and NFS to the file system out',
      allowAllOutbound: false,
    });
    this.taskSecurityGroup.addEgressRule(
      Peer.anyIpv4(),
      Port.tcp(443),
      'The AWS APIs (DynamoDB endpoint, S3, KMS, ECR and CloudWatch Logs via NAT)',
    );

    if (uses.has('repositories')) {
      this.taskDefinition.addVolume({ name: 'data', efsVolumeConfiguration: mount.volume });
      container.addMountPoints({ containerPath: mount.mountPath, sourceVolume: 'data', readOnly: false });
      for (const [name, value] of Object.entries(mount.environment)) container.addEnvironment(name, value);
      for (const statement of mount.policies) this.taskDefinition.addToTaskRolePolicy(statement);
      network.fileSystem.connections.allowDefaultPortFrom(this.taskSecurityGroup, 'Git front end tasks');
      Validations.of(taskRole).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Only elasticfilesystem:ClientMount uses Resource "*", conditioned on the one access point (elasticfilesystem:AccessPointArn), exactly as Lambda grants a function that mounts it.',
      });
    }

    this.service = new FargateService(this, 'Service', {
      cluster: this.cluster,
      taskDefinition: this.taskDefinition,
      desiredCount: props.minTasks,
      platformVersion: FargatePlatformVersion.LATEST,
      vpcSubnets,
      securityGroups: [this.taskSecurityGroup],
      assignPublicIp: false,
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { rollback: true },
      healthCheckGracePeriod: Duration.seconds(60),
      propagateTags: PropagatedTagSource.SERVICE,
      enableECSManagedTags: true,
    });
    // Tasks start only once the file system answers in every subnet.
    this.service.node.addDependency(network.fileSystem.mountTargetsAvailable);

    this.loadBalancerSecurityGroup = new SecurityGroup(this, 'LoadBalancerSecurityGroup', {
      vpc: network.vpc,
      description: 'Git front end load balancer: the web distribution in; the tasks out',
      allowAllOutbound: false,
    });
    this.loadBalancer = new ApplicationLoadBalancer(this, 'LoadBalancer', {
      vpc: network.vpc,
      vpcSubnets,
      internetFacing: false,
      securityGroup: this.loadBalancerSecurityGroup,
      // Above CloudFront's origin keep-alive and read timeouts, so the distribution closes first.
      idleTimeout: Duration.seconds(120),
      dropInvalidHeaderFields: true,
    });
    Validations.of(this.loadBalancer).acknowledge({
      id: 'AwsSolutions-ELB2',
      reason:
        "An access log records each request's full URL with its query string, and GitHub's clients may send credentials there (access_token); the service writes no secret to any log. The load balancer is internal and reached only through the web distribution; the Git front end logs its requests itself.",
    });
    const listener = this.loadBalancer.addListener('Http', {
      port: 80,
      protocol: ApplicationProtocol.HTTP,
      // Who may connect is the distribution's business (CloudFront's VPC origins security group).
      open: false,
    });
    this.targetGroup = listener.addTargets('Tasks', {
      port: GIT_FRONTEND_PORT,
      protocol: ApplicationProtocol.HTTP,
      targets: [this.service],
      deregistrationDelay: DRAIN,
      healthCheck: {
        path: GIT_FRONTEND_HEALTH_PATH,
        healthyHttpCodes: '200',
        interval: Duration.seconds(15),
        timeout: Duration.seconds(5),
        healthyThresholdCount: 2,
        unhealthyThresholdCount: 3,
      },
    });

    const scaling = this.service.autoScaleTaskCount({
      minCapacity: props.minTasks,
      maxCapacity: props.maxTasks,
    });
    // Packing and indexing are CPU-bound; a task's git processes share its 2 GiB.
    scaling.scaleOnCpuUtilization('Cpu', {
      targetUtilizationPercent: 60,
      scaleInCooldown: Duration.minutes(5),
      scaleOutCooldown: Duration.minutes(1),
    });
    scaling.scaleOnMemoryUtilization('Memory', {
      targetUtilizationPercent: 70,
      scaleInCooldown: Duration.minutes(5),
      scaleOutCooldown: Duration.minutes(1),
    });
    // Many small fetches (CI polling `info/refs`) before their CPU shows.
    scaling.scaleOnRequestCount('Requests', {
      requestsPerTarget: 600,
      targetGroup: this.targetGroup,
      scaleInCooldown: Duration.minutes(5),
      scaleOutCooldown: Duration.minutes(1),
    });
  }
}
