import { type Duration, type RemovalPolicy, Size } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Role } from 'aws-cdk-lib/aws-iam';
import { Architecture, DockerImageCode, DockerImageFunction, Tracing } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { RUNTIME_ENVIRONMENT } from './bundling.ts';
import {
  allowNetworkInterfaces,
  bindTable,
  type FunctionNetwork,
  functionExecution,
  type TableAccess,
} from './function-defaults.ts';
import { WORKER_IMAGE_CONTEXT, workerImageAsset } from './worker-image.ts';

export interface WorkerImageFunctionProps {
  /** Module under `functions/workflow/` (bundled into the image by `worker/bundle.ts`). */
  readonly handler: string;
  readonly description: string;
  readonly environment: Readonly<Record<string, string>>;
  /** In the VPC with the file system mounted: the workers need both. */
  readonly network: FunctionNetwork;
  /** @default 2048 MB: about 1.2 vCPU, which `git index-pack` and `git pack-objects` use. */
  readonly memorySize?: number;
  readonly timeout: Duration;
  /** What happens to the function's log group when it leaves the stack. @default RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
  /** Lambda's reserved concurrency for the function. @default none reserved */
  readonly reservedConcurrentExecutions?: number | undefined;
}

/**
 * A Git step of the import workflow: a container-image function from `lib/cdk/worker/Dockerfile`
 * (git, git-lfs, git-filter-repo, hg, svn, svn-all-fast-export), built by `cdk deploy` (synthesis
 * only fingerprints the build context; it runs no Docker). Every worker shares the one image and
 * differs by command. Same house defaults as `ApiFunction`: arm64, its own log group and role,
 * active tracing, `bindTable`.
 */
export class WorkerImageFunction extends DockerImageFunction {
  public readonly executionRole: Role;

  constructor(scope: Construct, id: string, props: WorkerImageFunctionProps) {
    const { logGroup, role } = functionExecution(scope, id, props);
    super(scope, id, {
      code: DockerImageCode.fromImageAsset(WORKER_IMAGE_CONTEXT, {
        ...workerImageAsset(),
        cmd: [`${props.handler}.handler`],
      }),
      description: props.description,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 2048,
      timeout: props.timeout,
      // git keeps temporary packs in the repository (EFS); /tmp holds only small scratch files.
      ephemeralStorageSize: Size.mebibytes(512),
      role,
      logGroup,
      tracing: Tracing.ACTIVE,
      environment: { ...props.environment, ...props.network.environment, ...RUNTIME_ENVIRONMENT },
      vpc: props.network.vpc,
      vpcSubnets: props.network.vpcSubnets,
      securityGroups: [...props.network.securityGroups],
      filesystem: props.network.filesystem,
      ...(props.reservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
    });
    this.executionRole = role;
    allowNetworkInterfaces(role);
  }

  /** Sets `ENV.tableName` and grants exactly the data-plane actions `access` names; once per function. */
  bindTable(table: ITable, access: TableAccess): void {
    bindTable(this, this.executionRole, table, access);
  }
}
