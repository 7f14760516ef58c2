import { CfnOutput, Lazy, Stack, type StackProps } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { ENV } from '#shared/config';
import { API_PREFIX } from '#shared/routes';
import { DataTable } from './data-table.ts';
import { publicUrlEnvironment } from './function-defaults.ts';
import { GIT_FRONTEND_ROUTES, GitFrontend } from './git-frontend.ts';
import { ImportWorkflow } from './import-workflow.ts';
import { LfsObjects } from './lfs-objects.ts';
import { IMPORT_ASL_FILE } from './paths.ts';
import { API_ROUTES, ServiceRestApi, STAGE_NAME } from './rest-api.ts';
import type { ServiceSettings } from './settings.ts';
import { SyncScheduler } from './sync-scheduler.ts';
import { WebDistribution } from './web-distribution.ts';
import { WebhookDelivery } from './webhook-delivery.ts';
import { WorkerNetwork } from './worker-network.ts';

export interface ServiceStackProps extends StackProps {
  readonly settings: ServiceSettings;
}

/**
 * Configuration variables every function and the Git front end get besides the public URLs
 * (`publicUrlEnvironment` of the web origin).
 */
export function functionEnvironment(settings: ServiceSettings): Record<string, string> {
  return {
    [ENV.vendor]: settings.vendor,
    [ENV.importBatchConcurrency]: String(settings.importBatchConcurrency),
  };
}

/**
 * The whole service: the table, the REST API with one function per route, the source import
 * workflow with its Git workers, their VPC and the file system holding the hosted repositories,
 * the Git front end serving those repositories, and the web distribution in front of the API and
 * the front end. The route functions are in nested stacks, one per route group
 * (`route-groups.ts`), which keeps every stack far below CloudFormation's 500 resources;
 * everything else is in this stack.
 */
export class ServiceStack extends Stack {
  public readonly table: DataTable;
  public readonly restApi: ServiceRestApi;
  /** Seals secrets the service must read back (TOTP seeds, import credentials), yearly rotated. */
  public readonly secretsKey: Key;
  public readonly network: WorkerNetwork;
  public readonly lfsObjects: LfsObjects;
  public readonly importWorkflow: ImportWorkflow;
  public readonly webhookDelivery: WebhookDelivery;
  public readonly gitFrontend: GitFrontend;
  public readonly web: WebDistribution;
  /** `https://host`: the custom domain, or the distribution's own name. */
  public readonly webOrigin: string;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, {
      description: 'GitHub REST API v3 authorizations, OAuth web flow and source imports',
      ...props,
    });
    const { settings } = props;
    // Every function's public URLs name the distribution, which is built last (it fronts the API
    // and the Git front end); CloudFormation orders it before the functions, which it does not need.
    let web: WebDistribution | undefined;
    this.webOrigin =
      settings.publicUrl ??
      Lazy.string({
        produce: () => {
          if (web === undefined) throw new Error('the web distribution was never built');
          return web.defaultOrigin;
        },
      });
    const environment = { ...functionEnvironment(settings), ...publicUrlEnvironment(this.webOrigin) };

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
      environment,
      importChunkSeconds: settings.importChunkSeconds,
      largeFileBytes: settings.largeFileBytes,
      workerConcurrency: settings.importWorkerConcurrency,
      logRemovalPolicy: settings.removalPolicy,
    });
    this.webhookDelivery = new WebhookDelivery(this, 'Webhooks', {
      table: this.table,
      secretsKey: this.secretsKey,
      environment,
      logRemovalPolicy: settings.removalPolicy,
    });
    // The steps that end an import or a sync announce it (`repository_import`).
    for (const step of ['Complete', 'RecordFailure'] as const) {
      const fn = this.importWorkflow.functions.get(step);
      if (fn) this.webhookDelivery.grantUse(fn);
    }
    new SyncScheduler(this, 'SyncScheduler', {
      table: this.table,
      stateMachine: this.importWorkflow.stateMachine,
      secretsKey: this.secretsKey,
      network: this.network,
      environment,
      logRemovalPolicy: settings.removalPolicy,
    });
    this.restApi = new ServiceRestApi(this, 'Api', {
      importWorkflow: this.importWorkflow,
      network: this.network,
      lfsObjects: this.lfsObjects,
      webhookDelivery: this.webhookDelivery,
      table: this.table,
      secretsKey: this.secretsKey,
      environment: functionEnvironment(settings),
      webOrigin: this.webOrigin,
      throttling: settings.throttling,
      logRemovalPolicy: settings.removalPolicy,
      manageCloudWatchRole: settings.apiGatewayCloudWatchRole,
      ...(settings.webAclArn === undefined ? {} : { webAclArn: settings.webAclArn }),
    });
    this.gitFrontend = new GitFrontend(this, 'GitFrontend', {
      network: this.network,
      table: this.table,
      secretsKey: this.secretsKey,
      lfsObjects: this.lfsObjects,
      // The file size limit a push is held to is the one imports report against.
      environment: { ...environment, [ENV.largeFileBytes]: String(settings.largeFileBytes) },
      minTasks: settings.gitFrontendTasks.min,
      maxTasks: settings.gitFrontendTasks.max,
      logRemovalPolicy: settings.removalPolicy,
    });
    web = new WebDistribution(this, 'Web', {
      restApi: this.restApi.api,
      stageName: STAGE_NAME,
      gitFrontend: this.gitFrontend,
      gitRoutes: GIT_FRONTEND_ROUTES,
      apiRoutes: API_ROUTES,
      ...(settings.publicUrl === undefined || settings.certificateArn === undefined
        ? {}
        : {
            domain: { name: new URL(settings.publicUrl).hostname, certificateArn: settings.certificateArn },
          }),
      ...(settings.distributionWebAclArn === undefined ? {} : { webAclArn: settings.distributionWebAclArn }),
      logRemovalPolicy: settings.removalPolicy,
    });
    this.web = web;

    new CfnOutput(this, 'ApiUrl', {
      description: 'Stage URL on the execute-api domain (the distribution is the way in)',
      value: this.restApi.api.url,
    });
    new CfnOutput(this, 'WebUrl', {
      description: 'The web origin: pages, and git clone <WebUrl>/<owner>/<repo>.git',
      value: this.webOrigin,
    });
    new CfnOutput(this, 'BaseUrl', {
      description: 'The {base_url} for GitHub clients (Octokit baseUrl, GHE host + /api/v3)',
      value: `${this.webOrigin}${API_PREFIX}`,
    });
    new CfnOutput(this, 'DistributionDomainName', {
      description: "The web distribution's own name: the target of publicUrl's DNS record",
      value: web.distribution.distributionDomainName,
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
