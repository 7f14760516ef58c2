import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { DataTable } from '#cdk/data-table';
import { ImportWorkflow } from '#cdk/import-workflow';
import { LfsObjects } from '#cdk/lfs-objects';
import { IMPORT_ASL_FILE } from '#cdk/paths';
import { ServiceRestApi } from '#cdk/rest-api';
import { WorkerNetwork } from '#cdk/worker-network';
import { placeholderOf, placeholdersIn, WORKFLOW_TASKS } from '#cdk/workflow-tasks';
import { BINARY_MEDIA_TYPES } from '#shared/binary-media';
import { ENV } from '#shared/config';
import { type Route, routeId } from '#shared/routes';
import { type CfnResource, deployedLogicalId, loadDeployment } from '#test/deployment';

/** The steps that end an import or a sync, and so queue `repository_import` deliveries. */
const ANNOUNCING: ReadonlySet<string> = new Set(['Complete', 'RecordFailure']);

interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}
type Resources = Record<string, CfnResource>;

const getAtt = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });
const actionsOf = (statement: Statement): string[] => [statement.Action].flat();
const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

function ofType(resources: Resources, type: string): [string, CfnResource][] {
  return Object.entries(resources).filter(([, resource]) => resource.Type === type);
}

/** Statements of every policy attached to a role. */
function roleStatements(resources: Resources, roleLogicalId: string): Statement[] {
  return ofType(resources, 'AWS::IAM::Policy')
    .filter(
      ([, policy]) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleLogicalId }]),
    )
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

function roleOf(fn: CfnResource): string {
  return (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
}

/** cdk.json's feature flags, as the real app gets them (policy minimization among them). */
const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
    context: Record<string, unknown>;
  }
).context;

const IMAGE_TASKS = WORKFLOW_TASKS.filter((task) => task.packaging === 'image');
const ZIP_TASKS = WORKFLOW_TASKS.filter((task) => task.packaging === 'zip');

describe('ImportWorkflow in the service stack (the one cdk synth of the infra project)', () => {
  const out = inject('cdkOut');
  let resources: Resources;
  /** Task name → logical id of its function. */
  const taskFunction = new Map<string, string>();

  beforeAll(() => {
    // The parent and its nested stacks (route functions) as one, references followed across them.
    resources = loadDeployment(out, 'OAuthImportService').resources as Resources;
    for (const task of WORKFLOW_TASKS) {
      const found = ofType(resources, 'AWS::Lambda::Function').filter(
        ([, fn]) => fn.Properties.Description === `Import workflow: ${task.name}`,
      );
      expect(found, task.name).toHaveLength(1);
      taskFunction.set(task.name, found[0]?.[0] ?? '');
    }
  });

  const stateMachine = () => {
    const machines = ofType(resources, 'AWS::StepFunctions::StateMachine');
    expect(machines).toHaveLength(1);
    return machines[0]?.[1] as CfnResource;
  };

  it('deploys statemachines/import.asl.json unchanged, each placeholder substituted by its Task function ARN', () => {
    const { Properties } = stateMachine();
    const assets = JSON.parse(readFileSync(join(out, 'OAuthImportService.assets.json'), 'utf8'));
    const key = (Properties.DefinitionS3Location as { Key: string }).Key;
    const asset = assets.files[key.replace(/\.json$/, '')];
    expect(readFileSync(join(out, asset.source.path), 'utf8')).toBe(readFileSync(IMPORT_ASL_FILE, 'utf8'));

    const substitutions = Properties.DefinitionSubstitutions as Record<string, unknown>;
    const placeholders = placeholdersIn(readFileSync(IMPORT_ASL_FILE, 'utf8'));
    expect(Object.keys(substitutions).sort()).toEqual([...placeholders].sort());
    for (const task of WORKFLOW_TASKS) {
      expect(substitutions[placeholderOf(task.name)], task.name).toEqual(
        getAtt(taskFunction.get(task.name) ?? ''),
      );
    }
    expect(Properties).toMatchObject({
      StateMachineName: 'OAuthImportService-SourceImport',
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
    });
  });

  it('lets the state machine invoke exactly its eight Task functions (and their versions) and nothing else of Lambda', () => {
    const role = (stateMachine().Properties.RoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const statements = roleStatements(resources, role);
    const lambda = statements.filter((statement) =>
      actionsOf(statement).some((a) => a.startsWith('lambda:')),
    );
    for (const statement of lambda) expect(actionsOf(statement)).toEqual(['lambda:InvokeFunction']);
    const invokable = lambda.flatMap((statement) => asList(statement.Resource)).map((r) => JSON.stringify(r));
    const expected = [...taskFunction.values()].flatMap((id) => [
      JSON.stringify(getAtt(id)),
      JSON.stringify({ 'Fn::Join': ['', [getAtt(id), ':*']] }),
    ]);
    expect(invokable.sort()).toEqual(expected.sort());
    // Anything on "*" is logs delivery or X-Ray, which support no resource-level permissions.
    const wildcard = statements.filter((statement) => asList(statement.Resource).includes('*'));
    for (const action of wildcard.flatMap(actionsOf)) expect(action).toMatch(/^(logs|xray):/);
  });

  it('lets only ContinueInNewExecution and the batch settle points start executions: this machine, found by its name (no dependency cycle)', () => {
    const starters = new Set(['ContinueInNewExecution', 'Complete', 'RecordFailure', 'WaitForPerson']);
    for (const task of WORKFLOW_TASKS) {
      const fn = resources[taskFunction.get(task.name) ?? ''] as CfnResource;
      const starts = roleStatements(resources, roleOf(fn)).filter((statement) =>
        actionsOf(statement).includes('states:StartExecution'),
      );
      if (!starters.has(task.name)) {
        expect(starts, task.name).toEqual([]);
        continue;
      }
      expect(starts.flatMap((statement) => asList(statement.Resource)).map((r) => JSON.stringify(r))).toEqual(
        [expect.stringContaining(':stateMachine:OAuthImportService-SourceImport')],
      );
      expect(JSON.stringify(fn.Properties.Environment.Variables[ENV.importStateMachineArn])).toContain(
        ':stateMachine:OAuthImportService-SourceImport',
      );
    }
  });

  it('runs the Git steps as arm64 container images of the worker Dockerfile, in the VPC with EFS at /mnt/data', () => {
    const assets = JSON.parse(readFileSync(join(out, 'OAuthImportService.assets.json'), 'utf8'));
    const images = Object.values(assets.dockerImages as Record<string, { source: Record<string, string> }>);
    expect(images.map((image) => image.source)).toEqual([
      expect.objectContaining({ dockerFile: 'lib/cdk/worker/Dockerfile', platform: 'linux/arm64' }),
    ]);
    const [accessPoint] = ofType(resources, 'AWS::EFS::AccessPoint');
    expect(accessPoint?.[1].Properties).toMatchObject({
      RootDirectory: { Path: '/service' },
      PosixUser: { Uid: '1000', Gid: '1000' },
    });
    const [workerGroup] = ofType(resources, 'AWS::EC2::SecurityGroup').filter(([id]) =>
      id.includes('Worker'),
    );
    for (const task of IMAGE_TASKS) {
      const fn = resources[taskFunction.get(task.name) ?? ''] as CfnResource;
      expect(fn.Properties, task.name).toMatchObject({
        PackageType: 'Image',
        Architectures: ['arm64'],
        Timeout: 900,
        ImageConfig: { Command: [`${task.handler}.handler`] },
        TracingConfig: { Mode: 'Active' },
        FileSystemConfigs: [{ LocalMountPath: '/mnt/data' }],
        VpcConfig: { SecurityGroupIds: [{ 'Fn::GetAtt': [workerGroup?.[0], 'GroupId'] }] },
      });
      expect(JSON.stringify(fn.Properties.FileSystemConfigs)).toContain(accessPoint?.[0]);
      expect(fn.Properties.Environment.Variables, task.name).toMatchObject({
        [ENV.importWorkDir]: '/mnt/data/imports',
        [ENV.repositoriesDir]: '/mnt/data/repositories',
        [ENV.importChunkSeconds]: '600',
        [ENV.largeFileBytes]: String(100 * 1024 * 1024),
        [ENV.vendor]: 'github',
      });
      expect(Number(fn.Properties.Environment.Variables[ENV.importChunkSeconds])).toBeLessThan(
        fn.Properties.Timeout as number,
      );
      // No reservation unless `importWorkerConcurrency` asks: the account's pool bounds the imports.
      expect(fn.Properties.ReservedConcurrentExecutions, task.name).toBeUndefined();
    }
  });

  it('runs the table-only steps as bundled zip functions outside the VPC', () => {
    for (const task of ZIP_TASKS) {
      const fn = resources[taskFunction.get(task.name) ?? ''] as CfnResource;
      expect(fn.Properties, task.name).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'] });
      expect(fn.Properties.VpcConfig, task.name).toBeUndefined();
      expect(fn.Properties.FileSystemConfigs, task.name).toBeUndefined();
      // Complete and RecordFailure announce the outcome to webhooks (test/infra/webhook-delivery.test.ts).
      if (ANNOUNCING.has(task.name))
        expect(fn.Properties.Environment.Variables[ENV.webhookDeliveryFunction]).toBeDefined();
      else expect(fn.Properties.Environment.Variables[ENV.secretsKmsKeyId], task.name).toBeUndefined();
    }
  });

  it('gives every Task read-write table access, and only the Git steps the key, for import credentials only', () => {
    for (const task of WORKFLOW_TASKS) {
      const fn = resources[taskFunction.get(task.name) ?? ''] as CfnResource;
      const statements = roleStatements(resources, roleOf(fn));
      expect(statements.flatMap(actionsOf), task.name).toEqual(
        expect.arrayContaining([
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:Query',
        ]),
      );
      const kms = statements.filter((statement) => actionsOf(statement).some((a) => a.startsWith('kms:')));
      if (task.packaging === 'zip') {
        expect(
          kms.map((statement) => (statement as { Condition?: unknown }).Condition),
          task.name,
        ).toEqual(
          ANNOUNCING.has(task.name)
            ? [{ StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-secret' } }]
            : [],
        );
        continue;
      }
      expect(kms, task.name).toEqual([
        {
          Action: 'kms:Decrypt',
          Effect: 'Allow',
          Resource: { 'Fn::GetAtt': [expect.stringMatching(/^SecretsKey/), 'Arn'] },
          Condition: { StringEquals: { 'kms:EncryptionContext:purpose': 'import-credentials' } },
        },
      ]);
      expect(
        statements.flatMap(actionsOf).filter((a) => a.startsWith('states:')),
        task.name,
      ).toEqual([]);
    }
  });

  it('encrypts the file system, requires TLS, and accepts NFS only from the security groups of functions and tasks that mount it', () => {
    const [[fsId, fileSystem] = ['', undefined as never]] = ofType(resources, 'AWS::EFS::FileSystem');
    expect(fileSystem.Properties.Encrypted).toBe(true);
    // Throughput follows the imports (no bursting credits to run out under many at once).
    expect(fileSystem.Properties).toMatchObject({
      ThroughputMode: 'elastic',
      PerformanceMode: 'generalPurpose',
    });
    expect(JSON.stringify(fileSystem.Properties.FileSystemPolicy)).toContain('"aws:SecureTransport":"false"');
    const mountTargets = ofType(resources, 'AWS::EFS::MountTarget');
    expect(mountTargets.length).toBeGreaterThan(0);
    const groupIds = new Set(
      mountTargets.flatMap(([, target]) =>
        (target.Properties.SecurityGroups as { 'Fn::GetAtt': [string] }[]).map((g) => g['Fn::GetAtt'][0]),
      ),
    );
    expect(groupIds.size).toBe(1);
    const [efsGroup] = [...groupIds];
    for (const target of mountTargets)
      expect(JSON.stringify(target[1].Properties.FileSystemId)).toContain(fsId);

    // Inline rules: none in (no CIDR can reach NFS), none out.
    const group = resources[efsGroup ?? ''] as CfnResource;
    expect(group.Properties.SecurityGroupIngress ?? []).toEqual([]);
    expect(JSON.stringify(group.Properties.SecurityGroupEgress)).toContain('255.255.255.255/32');
    // Standalone rules: every ingress to it is NFS from a function security group.
    const ingress = ofType(resources, 'AWS::EC2::SecurityGroupIngress').filter(
      ([, rule]) => rule.Properties.GroupId['Fn::GetAtt'][0] === efsGroup,
    );
    // The Git workers and the route functions that use `repositories` (in nested stacks).
    const mounting = ofType(resources, 'AWS::Lambda::Function').filter(
      ([, fn]) => fn.Properties.FileSystemConfigs !== undefined,
    );
    expect(mounting.length).toBeGreaterThan(IMAGE_TASKS.length);
    // And the Git front end's tasks (test/infra/git-frontend.test.ts).
    const services = ofType(resources, 'AWS::ECS::Service');
    expect(services).toHaveLength(1);
    const mountingGroups = new Set([
      ...mounting.flatMap(([, fn]) =>
        (fn.Properties.VpcConfig.SecurityGroupIds as { 'Fn::GetAtt': [string] }[]).map(
          (group) => group['Fn::GetAtt'][0],
        ),
      ),
      ...services.flatMap(([, service]) =>
        (
          service.Properties.NetworkConfiguration.AwsvpcConfiguration.SecurityGroups as {
            'Fn::GetAtt': [string];
          }[]
        ).map((group) => group['Fn::GetAtt'][0]),
      ),
    ]);
    expect(ingress.length).toBeGreaterThan(0);
    for (const [, rule] of ingress) {
      expect(rule.Properties).toMatchObject({ IpProtocol: 'tcp', FromPort: 2049, ToPort: 2049 });
      expect(rule.Properties.CidrIp).toBeUndefined();
      expect(mountingGroups.has(rule.Properties.SourceSecurityGroupId['Fn::GetAtt'][0])).toBe(true);
    }
  });

  it('lets the workers out only to TCP 80, 443, 9418 and 3690 anywhere, and NFS to the file system', () => {
    const [[groupId, group] = ['', undefined as never]] = ofType(resources, 'AWS::EC2::SecurityGroup').filter(
      ([id]) => id.includes('Worker'),
    );
    const inline = (group.Properties.SecurityGroupEgress as Record<string, unknown>[]).map(
      (rule) => `${rule.IpProtocol} ${rule.FromPort}-${rule.ToPort} ${rule.CidrIp}`,
    );
    expect(inline.sort()).toEqual(
      [
        'tcp 80-80 0.0.0.0/0',
        'tcp 443-443 0.0.0.0/0',
        'tcp 9418-9418 0.0.0.0/0',
        'tcp 3690-3690 0.0.0.0/0',
      ].sort(),
    );
    const standalone = ofType(resources, 'AWS::EC2::SecurityGroupEgress').filter(
      ([, rule]) => rule.Properties.GroupId['Fn::GetAtt'][0] === groupId,
    );
    expect(standalone.map(([, rule]) => `${rule.Properties.FromPort}-${rule.Properties.ToPort}`)).toEqual([
      '2049-2049',
    ]);
  });

  it('has one NAT gateway by default, private subnets routed through it, and DynamoDB and S3 gateway endpoints', () => {
    expect(ofType(resources, 'AWS::EC2::NatGateway')).toHaveLength(1);
    const endpoints = ofType(resources, 'AWS::EC2::VPCEndpoint');
    expect(
      endpoints
        .map(([, endpoint]) => JSON.stringify(endpoint.Properties.ServiceName).match(/\.(dynamodb|s3)"/)?.[1])
        .sort(),
    ).toEqual(['dynamodb', 's3']);
    for (const [, endpoint] of endpoints) {
      expect(endpoint.Properties.VpcEndpointType ?? 'Gateway').toBe('Gateway');
      // On the private subnets' route tables, where the functions sit.
      expect(endpoint.Properties.RouteTableIds.length).toBeGreaterThan(0);
    }
    expect(ofType(resources, 'AWS::EC2::FlowLog')).toHaveLength(1);
  });
});

describe('ServiceRestApi routes that use the import workflow or the repositories', () => {
  const route = (handler: string, path: string, uses?: Route['uses']): Route => ({
    method: 'GET',
    path,
    handler,
    // Not a sign-in kind (signsIn): the only key access a function gets is what `uses` grants.
    auth: 'app',
    scopes: [],
    media: 'json',
    table: 'RO',
    ...(uses === undefined ? {} : { uses }),
  });
  // Existing handlers stand in: only the `uses` column matters here.
  const ROUTES = [
    route('repos/get', '/api/v3/workflow', ['import-workflow']),
    route('users/get-by-login', '/git/{owner}/{repo}', ['repositories']),
    route('grants/list', '/plain'),
  ];
  let resources: Resources;
  let api: ServiceRestApi;
  let violations: string[];

  function build(routes: readonly Route[]) {
    const app = new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
    const nag = new AwsSolutionsChecks(app);
    Validations.of(app).addPlugins(nag);
    const stack = new Stack(app, 'UsesTest');
    const table = new DataTable(stack, 'Table', { removalPolicy: RemovalPolicy.DESTROY });
    const secretsKey = new Key(stack, 'SecretsKey', { enableKeyRotation: true });
    const network = new WorkerNetwork(stack, 'Network', {
      natGateways: 1,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const workflow = new ImportWorkflow(stack, 'Import', {
      definitionFile: fileURLToPath(new URL('../fixtures/import-shape.asl.json', import.meta.url)),
      stateMachineName: 'UsesTest-SourceImport',
      table,
      secretsKey,
      network,
      lfsObjects: new LfsObjects(stack, 'LfsObjects', { removalPolicy: RemovalPolicy.DESTROY }),
      environment: {},
      importChunkSeconds: 30,
      largeFileBytes: 1024,
      logRemovalPolicy: RemovalPolicy.DESTROY,
    });
    const api = new ServiceRestApi(stack, 'Api', {
      table,
      secretsKey,
      routes,
      environment: {},
      throttling: { rateLimit: 1, burstLimit: 1 },
      logRemovalPolicy: RemovalPolicy.DESTROY,
      manageCloudWatchRole: false,
      importWorkflow: workflow,
      network,
    });
    return { app, stack, api, nag };
  }

  beforeAll(() => {
    const built = build(ROUTES);
    const validate = (
      built.nag.validate as (...args: never[]) => { violations: { ruleName: string }[] }
    ).bind(built.nag);
    const results: string[] = [];
    built.nag.validate = ((...args: never[]) => {
      const report = validate(...args);
      results.push(...report.violations.map((violation) => violation.ruleName));
      return report;
    }) as never;
    const assembly = built.app.synth();
    violations = results;
    resources = loadDeployment(assembly.directory, 'UsesTest').resources as Resources;
    api = built.api;
  });

  const functionOf = (handler: string) => {
    const fn = api.functions.get(routeId({ handler }));
    if (fn === undefined) throw new Error(`no function for ${handler}`);
    const id = deployedLogicalId(fn);
    return [id, resources[id] as CfnResource] as const;
  };

  it('passes the AwsSolutions checks', () => {
    expect(violations).toEqual([]);
  });

  it('gives an import-workflow route the machine ARN and exactly the Step Functions and KMS actions it needs', () => {
    const [, fn] = functionOf('repos/get');
    const machineId = ofType(resources, 'AWS::StepFunctions::StateMachine')[0]?.[0];
    expect(fn.Properties.Environment.Variables[ENV.importStateMachineArn]).toEqual({ Ref: machineId });
    expect(fn.Properties.VpcConfig).toBeUndefined();
    // Statements may be merged (policy minimization): compare per resource and condition.
    const granted = roleStatements(resources, roleOf(fn)).flatMap((statement) => {
      const actions = actionsOf(statement).filter((action) => /^(states|kms):/.test(action));
      return actions.length === 0
        ? []
        : [{ actions: actions.sort(), resource: statement.Resource, condition: statement.Condition }];
    });
    expect(granted).toHaveLength(4);
    expect(granted).toEqual(
      expect.arrayContaining([
        { actions: ['states:StartExecution'], resource: { Ref: machineId }, condition: undefined },
        {
          actions: ['states:DescribeExecution', 'states:StopExecution'],
          resource: {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':states:',
                { Ref: 'AWS::Region' },
                ':',
                { Ref: 'AWS::AccountId' },
                ':execution:UsesTest-SourceImport:*',
              ],
            ],
          },
          condition: undefined,
        },
        {
          actions: ['states:SendTaskFailure', 'states:SendTaskHeartbeat', 'states:SendTaskSuccess'],
          resource: '*',
          condition: undefined,
        },
        {
          actions: ['kms:Encrypt'],
          resource: { 'Fn::GetAtt': [expect.stringMatching(/^SecretsKey/), 'Arn'] },
          condition: { StringEquals: { 'kms:EncryptionContext:purpose': 'import-credentials' } },
        },
      ]),
    );
  });

  it('puts a repositories route in the VPC with the file system at /mnt/data, and nothing of the workflow', () => {
    const [, fn] = functionOf('users/get-by-login');
    expect(fn.Properties.FileSystemConfigs).toEqual([
      expect.objectContaining({ LocalMountPath: '/mnt/data' }),
    ]);
    expect(fn.Properties.Environment.Variables).toMatchObject({
      [ENV.importWorkDir]: '/mnt/data/imports',
      [ENV.repositoriesDir]: '/mnt/data/repositories',
    });
    expect(fn.Properties.Environment.Variables[ENV.importStateMachineArn]).toBeUndefined();
    const [apiGroup] = fn.Properties.VpcConfig.SecurityGroupIds as { 'Fn::GetAtt': [string] }[];
    const group = resources[apiGroup?.['Fn::GetAtt'][0] ?? ''] as CfnResource;
    expect(
      group.Properties.SecurityGroupEgress.map((rule: Record<string, unknown>) => rule.FromPort),
    ).toEqual([443]);
    const nfsFromApi = ofType(resources, 'AWS::EC2::SecurityGroupIngress').filter(
      ([, rule]) => rule.Properties.SourceSecurityGroupId['Fn::GetAtt'][0] === apiGroup?.['Fn::GetAtt'][0],
    );
    expect(nfsFromApi.map(([, rule]) => rule.Properties.FromPort)).toEqual([2049]);
    const actions = roleStatements(resources, roleOf(fn)).flatMap(actionsOf);
    expect(actions.filter((action) => /^(states|kms):/.test(action))).toEqual([]);
    expect(actions).toEqual(
      expect.arrayContaining(['elasticfilesystem:ClientMount', 'ec2:CreateNetworkInterface']),
    );
  });

  it('leaves a route without uses outside the VPC with neither workflow nor key access', () => {
    const [, fn] = functionOf('grants/list');
    expect(fn.Properties.VpcConfig).toBeUndefined();
    expect(fn.Properties.FileSystemConfigs).toBeUndefined();
    const actions = roleStatements(resources, roleOf(fn)).flatMap(actionsOf);
    expect(actions.filter((action) => /^(states|kms|elasticfilesystem|ec2):/.test(action))).toEqual([]);
  });

  it("gives the RestApi Git's and LFS's binary media types", () => {
    const [restApi] = ofType(resources, 'AWS::ApiGateway::RestApi');
    expect(restApi?.[1].Properties.BinaryMediaTypes).toEqual([...BINARY_MEDIA_TYPES]);
  });

  it('refuses a route that uses the workflow when the API has none', () => {
    const app = new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
    const bare = new Stack(app, 'Bare');
    const table = new DataTable(bare, 'Table', { removalPolicy: RemovalPolicy.DESTROY });
    expect(
      () =>
        new ServiceRestApi(bare, 'Api', {
          table,
          secretsKey: new Key(bare, 'Key'),
          routes: [ROUTES[0] as Route],
          environment: {},
          throttling: { rateLimit: 1, burstLimit: 1 },
          logRemovalPolicy: RemovalPolicy.DESTROY,
          manageCloudWatchRole: false,
        }),
    ).toThrow(/uses import-workflow: ServiceRestApi needs importWorkflow/);
  });
});
