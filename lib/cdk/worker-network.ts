import type { RemovalPolicy } from 'aws-cdk-lib';
import {
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  Peer,
  Port,
  SecurityGroup,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import type { EfsVolumeConfiguration } from 'aws-cdk-lib/aws-ecs';
import { type AccessPoint, FileSystem, PerformanceMode, ThroughputMode } from 'aws-cdk-lib/aws-efs';
import { AnyPrincipal, Effect, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { FileSystem as LambdaFileSystem } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '#shared/config';
import type { FunctionNetwork } from './function-defaults.ts';
import { MAX_AVAILABILITY_ZONES } from './settings.ts';

/** The file system as an ECS task mounts it (the Git front end): what `FunctionNetwork` is to a function. */
export interface ContainerMount {
  /** The task's EFS volume: through the access point, over TLS, with IAM authorization. */
  readonly volume: EfsVolumeConfiguration;
  readonly mountPath: string;
  /** `uid:gid` the container runs as: the access point's POSIX user. */
  readonly user: string;
  /** The directories on the mount (`ENV.importWorkDir`, `ENV.repositoriesDir`). */
  readonly environment: Readonly<Record<string, string>>;
  /** What the task role needs to mount and write: the statements a function mounting it gets. */
  readonly policies: readonly PolicyStatement[];
}

export interface WorkerNetworkProps {
  /** One per availability zone at most; 1 is a single point of failure for imports only. */
  readonly natGateways: number;
  /** For the file system and the flow logs; RETAIN for anything holding real repositories. */
  readonly removalPolicy: RemovalPolicy;
}

/** Where functions mount the file system (Lambda allows one level under `/mnt`). */
export const MOUNT_PATH = '/mnt/data';
/** POSIX user and group every function acts as on the file system (the access point enforces it). */
export const FILE_SYSTEM_USER = { uid: '1000', gid: '1000' } as const;

/**
 * Ports the import workers may open to origins on the internet: HTTP and HTTPS (smart and dumb
 * HTTP, and the AWS APIs through the NAT gateway or the DynamoDB and S3 gateway endpoints), the `git://`
 * daemon and `svn://` (the next issue's Subversion origins). Nothing else leaves the workers.
 */
export const ORIGIN_PORTS = [
  { port: 80, why: 'HTTP origins' },
  { port: 443, why: 'HTTPS origins and the AWS APIs (DynamoDB endpoint, KMS, STS, Step Functions via NAT)' },
  { port: 9418, why: 'git:// origins' },
  { port: 3690, why: 'svn:// origins' },
] as const;

/**
 * The network and storage of everything that runs Git: a VPC whose private subnets reach the
 * internet through NAT gateways (origins are anywhere), DynamoDB and S3 gateway endpoints (free,
 * and keep table and Git LFS object traffic off the NAT), and one encrypted EFS file system holding the import working
 * directories and the hosted repositories, mounted at `/mnt/data` through one access point.
 *
 * The file system accepts NFS only from the security groups of functions that mount it, and only
 * over TLS with IAM authorization (each function's role may mount through the access point only).
 * Lambda functions in a VPC have no instance metadata service; the application's address rules
 * (`domain/origin-url.ts`) refuse private, link-local and metadata addresses before connecting, so
 * an origin URL cannot reach this VPC's own addresses either.
 */
export class WorkerNetwork extends Construct {
  public readonly vpc: Vpc;
  public readonly fileSystem: FileSystem;
  /** Root `/service`, owned by `FILE_SYSTEM_USER`: `imports/` and `repositories/` beneath it. */
  public readonly accessPoint: AccessPoint;
  /** The Git workers: NFS to the file system, and `ORIGIN_PORTS` to anywhere. */
  public readonly workerSecurityGroup: SecurityGroup;
  private apiSecurityGroup: SecurityGroup | undefined;

  constructor(scope: Construct, id: string, props: WorkerNetworkProps) {
    super(scope, id);
    this.vpc = new Vpc(this, 'Vpc', {
      maxAzs: MAX_AVAILABILITY_ZONES,
      natGateways: props.natGateways,
      subnetConfiguration: [
        { name: 'Public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'Private', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
      ],
      // Table and Git LFS object traffic stays off the NAT gateways (gateway endpoints are free).
      gatewayEndpoints: {
        DynamoDb: { service: GatewayVpcEndpointAwsService.DYNAMODB },
        S3: { service: GatewayVpcEndpointAwsService.S3 },
      },
    });
    const flowLogs = new LogGroup(this, 'FlowLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.removalPolicy,
    });
    this.vpc.addFlowLog('FlowLog', {
      destination: FlowLogDestination.toCloudWatchLogs(flowLogs),
      trafficType: FlowLogTrafficType.ALL,
    });

    const fileSystemSecurityGroup = new SecurityGroup(this, 'FileSystemSecurityGroup', {
      vpc: this.vpc,
      description: 'EFS mount targets: NFS from the functions that mount the file system only',
      allowAllOutbound: false,
    });
    this.fileSystem = new FileSystem(this, 'FileSystem', {
      vpc: this.vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_WITH_EGRESS },
      securityGroup: fileSystemSecurityGroup,
      encrypted: true,
      performanceMode: PerformanceMode.GENERAL_PURPOSE,
      // Pays per byte moved instead of provisioning; bursts with git's pack writes and reads.
      throughputMode: ThroughputMode.ELASTIC,
      enableAutomaticBackups: true,
      removalPolicy: props.removalPolicy,
      fileSystemPolicy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            sid: 'DenyUnencryptedTransport',
            effect: Effect.DENY,
            principals: [new AnyPrincipal()],
            actions: ['*'],
            conditions: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ],
      }),
    });
    this.accessPoint = this.fileSystem.addAccessPoint('AccessPoint', {
      path: '/service',
      createAcl: { ownerUid: FILE_SYSTEM_USER.uid, ownerGid: FILE_SYSTEM_USER.gid, permissions: '750' },
      posixUser: FILE_SYSTEM_USER,
    });

    this.workerSecurityGroup = new SecurityGroup(this, 'WorkerSecurityGroup', {
      vpc: this.vpc,
      description: 'Import workers: origins on HTTP, HTTPS, git and svn ports; NFS to the file system',
      allowAllOutbound: false,
    });
    for (const { port, why } of ORIGIN_PORTS) {
      this.workerSecurityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(port), why);
    }
  }

  /** The VPC placement and mount of an import worker. */
  get worker(): FunctionNetwork {
    return this.functionNetwork(this.workerSecurityGroup);
  }

  /**
   * The VPC placement and mount of an API function that uses `repositories`: its security group
   * opens only HTTPS (the AWS APIs) and NFS; it never talks to origins.
   */
  get api(): FunctionNetwork {
    if (this.apiSecurityGroup === undefined) {
      this.apiSecurityGroup = new SecurityGroup(this, 'ApiSecurityGroup', {
        vpc: this.vpc,
        description: 'API functions serving hosted repositories: HTTPS to AWS APIs; NFS to the file system',
        allowAllOutbound: false,
      });
      this.apiSecurityGroup.addEgressRule(
        Peer.anyIpv4(),
        Port.tcp(443),
        'The AWS APIs (DynamoDB endpoint, KMS, Step Functions via NAT)',
      );
    }
    return this.functionNetwork(this.apiSecurityGroup);
  }

  /**
   * The same access point, path, user and IAM statements for an ECS task; the caller lets its
   * security group reach the file system (`fileSystem.connections`).
   */
  get container(): ContainerMount {
    return {
      volume: {
        fileSystemId: this.fileSystem.fileSystemId,
        transitEncryption: 'ENABLED',
        authorizationConfig: { accessPointId: this.accessPoint.accessPointId, iam: 'ENABLED' },
      },
      mountPath: MOUNT_PATH,
      user: `${FILE_SYSTEM_USER.uid}:${FILE_SYSTEM_USER.gid}`,
      environment: this.mountEnvironment(),
      // Exactly what Lambda grants a function mounting the access point (ClientMount conditioned on
      // it, ClientWrite on the file system), taken from the same CDK call so the two cannot drift.
      policies: LambdaFileSystem.fromEfsAccessPoint(this.accessPoint, MOUNT_PATH).config.policies ?? [],
    };
  }

  private functionNetwork(securityGroup: SecurityGroup): FunctionNetwork {
    return {
      vpc: this.vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_WITH_EGRESS },
      securityGroups: [securityGroup],
      filesystem: LambdaFileSystem.fromEfsAccessPoint(this.accessPoint, MOUNT_PATH),
      environment: this.mountEnvironment(),
    };
  }

  private mountEnvironment(): Record<string, string> {
    return {
      [ENV.importWorkDir]: `${MOUNT_PATH}/imports`,
      [ENV.repositoriesDir]: `${MOUNT_PATH}/repositories`,
    };
  }
}
