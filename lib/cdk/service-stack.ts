import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { ENV } from '#shared/config';
import { API_PREFIX } from '#shared/routes';
import { DataTable } from './data-table.ts';
import { ImportWorkflow } from './import-workflow.ts';
import { LfsObjects } from './lfs-objects.ts';
import { IMPORT_ASL_FILE } from './paths.ts';
import { ServiceRestApi } from './rest-api.ts';
import type { ServiceSettings } from './settings.ts';
import { WorkerNetwork } from './worker-network.ts';

export interface ServiceStackProps extends StackProps {
  readonly settings: ServiceSettings;
}

/**
 * Configuration variables every function gets. The public URLs are set only for a custom domain:
 * without one, handlers derive them per request from the API Gateway domain and stage, because
 * setting them from the RestApi's URL would make every function depend on the API that depends on
 * every function.
 */
export function functionEnvironment(settings: ServiceSettings): Record<string, string> {
  const environment: Record<string, string> = { [ENV.vendor]: settings.vendor };
  if (settings.publicUrl !== undefined) {
    environment[ENV.baseUrl] = `${settings.publicUrl}${API_PREFIX}`;
    environment[ENV.authUrl] = settings.publicUrl;
    environment[ENV.settingsUrl] = settings.publicUrl;
    environment[ENV.importUrl] = settings.publicUrl;
  }
  return environment;
}

/**
 * The whole service: the table, the REST API with one function per route, and the source import
 * workflow with its Git workers, their VPC and the file system holding the hosted repositories.
 * The route functions are in nested stacks, one per route group (`route-groups.ts`), which keeps
 * every stack far below CloudFormation's 500 resources; everything else is in this stack.
 */
export class ServiceStack extends Stack {
  public readonly table: DataTable;
  public readonly restApi: ServiceRestApi;
  /** Seals secrets the service must read back (TOTP seeds, import credentials), yearly rotated. */
  public readonly secretsKey: Key;
  public readonly network: WorkerNetwork;
  public readonly lfsObjects: LfsObjects;
  public readonly importWorkflow: ImportWorkflow;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, {
      description: 'GitHub REST API v3 authorizations, OAuth web flow and source imports',
      ...props,
    });
    const { settings } = props;

    this.table = new DataTable(this, 'Table', { removalPolicy: settings.removalPolicy });
    this.secretsKey = new Key(this, 'SecretsKey', {
      description: 'Seals stored secrets the service reads back (TOTP seeds, import credentials)',
      enableKeyRotation: true,
      removalPolicy: settings.removalPolicy,
    });
    this.network = new WorkerNetwork(this, 'Network', {
      natGateways: settings.natGateways,
      removalPolicy: settings.removalPolicy,
    });
    this.lfsObjects = new LfsObjects(this, 'LfsObjects', { removalPolicy: settings.removalPolicy });
    this.importWorkflow = new ImportWorkflow(this, 'Import', {
      definitionFile: IMPORT_ASL_FILE,
      stateMachineName: `${settings.stackName}-SourceImport`,
      table: this.table,
      secretsKey: this.secretsKey,
      network: this.network,
      lfsObjects: this.lfsObjects,
      environment: functionEnvironment(settings),
      importChunkSeconds: settings.importChunkSeconds,
      largeFileBytes: settings.largeFileBytes,
      logRemovalPolicy: settings.removalPolicy,
    });
    this.restApi = new ServiceRestApi(this, 'Api', {
      importWorkflow: this.importWorkflow,
      network: this.network,
      lfsObjects: this.lfsObjects,
      table: this.table,
      secretsKey: this.secretsKey,
      environment: functionEnvironment(settings),
      throttling: settings.throttling,
      logRemovalPolicy: settings.removalPolicy,
      manageCloudWatchRole: settings.apiGatewayCloudWatchRole,
      ...(settings.webAclArn === undefined ? {} : { webAclArn: settings.webAclArn }),
    });

    new CfnOutput(this, 'ApiUrl', {
      description: 'Stage URL on the execute-api domain',
      value: this.restApi.api.url,
    });
    new CfnOutput(this, 'BaseUrl', {
      description: 'The {base_url} for GitHub clients (Octokit baseUrl, GHE host + /api/v3)',
      value: settings.publicUrl === undefined ? this.restApi.baseUrl : `${settings.publicUrl}${API_PREFIX}`,
    });
    new CfnOutput(this, 'TableName', { description: 'The service table', value: this.table.tableName });
    new CfnOutput(this, 'SecretsKeyArn', {
      description: 'The KMS key sealing TOTP seeds and import credentials (admin CLI: --kms-key)',
      value: this.secretsKey.keyArn,
    });
    new CfnOutput(this, 'LfsBucketName', {
      description: 'The S3 bucket holding Git LFS objects (<owner>/<repo>/<oid>)',
      value: this.lfsObjects.bucket.bucketName,
    });
    new CfnOutput(this, 'ImportStateMachineArn', {
      description: 'The source import workflow (statemachines/import.asl.json)',
      value: this.importWorkflow.stateMachine.stateMachineArn,
    });
  }
}
