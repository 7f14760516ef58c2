import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { GIT_FRONTEND_HEALTH_PATH, GIT_FRONTEND_PORT, GIT_FRONTEND_ROUTES } from '#cdk/git-frontend';
import { API_ROUTES, STAGE_NAME } from '#cdk/rest-api';
import { gitPathPatterns, pathPattern, patternMatches } from '#cdk/web-distribution';
import { GIT_SERVER_BUNDLE } from '#cdk/worker/bundle';
import { ENV } from '#shared/config';
import { ROUTES, type Route } from '#shared/routes';
import { SECURITY_EVENT_SOURCE } from '#shared/security-events';
import { type CfnResource, loadDeployment } from '#test/deployment';

type Resources = Record<string, CfnResource>;
/** Untyped template JSON (see `CfnResource`). */
type Json = CfnResource['Properties'];

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

const ofType = (resources: Resources, type: string): [string, CfnResource][] =>
  Object.entries(resources).filter(([, resource]) => resource.Type === type);

function only(resources: Resources, type: string): [string, CfnResource] {
  const found = ofType(resources, type);
  expect(found, type).toHaveLength(1);
  return found[0] as [string, CfnResource];
}

function statementsOf(resources: Resources, roleId: string): Statement[] {
  return ofType(resources, 'AWS::IAM::Policy')
    .filter(([, policy]) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

const actionsOf = (statements: readonly Statement[]): string[] =>
  statements.flatMap((statement) => [statement.Action].flat()).sort();
const getAttId = (value: unknown): string => (value as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
const refId = (value: unknown): string => (value as { Ref: string }).Ref;

describe('the Git front end in the service stack (the one cdk synth of the infra project)', () => {
  const out = inject('cdkOut');
  let resources: Resources;
  let task: CfnResource;
  let container: Record<string, unknown> & { Environment: { Name: string; Value: unknown }[] };
  let environment: Record<string, unknown>;
  let service: CfnResource;

  beforeAll(() => {
    resources = loadDeployment(out, 'OAuthImportService').resources as Resources;
    task = only(resources, 'AWS::ECS::TaskDefinition')[1];
    [container] = task.Properties.ContainerDefinitions;
    environment = Object.fromEntries(container.Environment.map(({ Name, Value }) => [Name, Value]));
    service = only(resources, 'AWS::ECS::Service')[1];
  });

  it('runs the worker image (the very asset of the Git steps) on Fargate arm64, with node and the bundled server as its command', () => {
    expect(only(resources, 'AWS::ECS::Cluster')[0]).toBe(refId(service.Properties.Cluster));
    expect(service.Properties).toMatchObject({
      LaunchType: 'FARGATE',
      DesiredCount: 1,
      NetworkConfiguration: { AwsvpcConfiguration: { AssignPublicIp: 'DISABLED' } },
      DeploymentConfiguration: { DeploymentCircuitBreaker: { Enable: true, Rollback: true } },
      LoadBalancers: [{ ContainerName: container.Name, ContainerPort: GIT_FRONTEND_PORT }],
    });
    expect(task.Properties).toMatchObject({
      RequiresCompatibilities: ['FARGATE'],
      RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
      Cpu: '1024',
      Memory: '2048',
    });
    expect(container).toMatchObject({
      EntryPoint: ['node'],
      Command: [`/var/task/${GIT_SERVER_BUNDLE}.mjs`],
      PortMappings: [{ ContainerPort: GIT_FRONTEND_PORT, Protocol: 'tcp' }],
      // The access point's POSIX user, not root.
      User: '1000:1000',
      StopTimeout: 120,
      // An init as PID 1 reaps the git processes killed with an abandoned request.
      LinuxParameters: { InitProcessEnabled: true },
    });
    // One image in the assembly: the worker functions' and the task's are the same asset.
    const assets = JSON.parse(readFileSync(join(out, 'OAuthImportService.assets.json'), 'utf8'));
    const hashes = Object.keys(assets.dockerImages);
    expect(hashes).toHaveLength(1);
    expect(JSON.stringify(container.Image)).toContain(`:${hashes[0]}`);
    const workers = ofType(resources, 'AWS::Lambda::Function').filter(
      ([, fn]) => fn.Properties.PackageType === 'Image',
    );
    expect(workers.length).toBeGreaterThan(0);
    for (const [, worker] of workers)
      expect(JSON.stringify(worker.Properties.Code)).toContain(`:${hashes[0]}`);
  });

  it('gets the configuration the functions get, from the same constants, and the port', () => {
    const [, push] = ofType(resources, 'AWS::Lambda::Function').find(
      ([, fn]) => fn.Properties.Description === 'Import workflow: Push',
    ) as [string, CfnResource];
    const functionVariables = push.Properties.Environment.Variables as Record<string, unknown>;
    for (const name of [
      ENV.vendor,
      ENV.baseUrl,
      ENV.authUrl,
      ENV.settingsUrl,
      ENV.importUrl,
      ENV.tableName,
      ENV.repositoriesDir,
      ENV.importWorkDir,
      ENV.lfsBucket,
      ENV.secretsKmsKeyId,
      'NODE_OPTIONS',
    ]) {
      expect(environment[name], name).toEqual(functionVariables[name]);
    }
    expect(environment.PORT).toBe(String(GIT_FRONTEND_PORT));
    // The web origin is the distribution's own name (no custom domain here).
    const [distributionId] = only(resources, 'AWS::CloudFront::Distribution');
    expect(environment[ENV.authUrl]).toEqual({
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }]],
    });
  });

  it('mounts the file system through the access point the functions use, at the same path, over TLS with IAM authorization', () => {
    const [accessPointId] = only(resources, 'AWS::EFS::AccessPoint');
    const [fileSystemId] = only(resources, 'AWS::EFS::FileSystem');
    expect(task.Properties.Volumes).toEqual([
      {
        Name: 'data',
        EFSVolumeConfiguration: {
          FilesystemId: { Ref: fileSystemId },
          TransitEncryption: 'ENABLED',
          AuthorizationConfig: { AccessPointId: { Ref: accessPointId }, IAM: 'ENABLED' },
        },
      },
    ]);
    expect(container.MountPoints).toEqual([
      { ContainerPath: '/mnt/data', SourceVolume: 'data', ReadOnly: false },
    ]);
    const lambdaMounts = ofType(resources, 'AWS::Lambda::Function').filter(
      ([, fn]) => fn.Properties.FileSystemConfigs !== undefined,
    );
    expect(lambdaMounts.length).toBeGreaterThan(0);
    for (const [, fn] of lambdaMounts)
      expect(fn.Properties.FileSystemConfigs[0].LocalMountPath).toBe('/mnt/data');

    // The EFS statements are exactly a mounting function's.
    const efs = (roleId: string) =>
      statementsOf(resources, roleId).filter((statement) =>
        actionsOf([statement]).some((action) => action.startsWith('elasticfilesystem:')),
      );
    const functionRole = getAttId(lambdaMounts[0]?.[1].Properties.Role);
    const taskStatements = efs(getAttId(task.Properties.TaskRoleArn));
    expect(taskStatements).toHaveLength(2);
    expect(taskStatements).toEqual(efs(functionRole));
    expect(JSON.stringify(taskStatements)).toContain(accessPointId);
  });

  it('gives the task role exactly what the Git routes ask for: the table as their table column says, the key for sign-in, the LFS objects, the mount, the security events', () => {
    const needsWrite = GIT_FRONTEND_ROUTES.some((route) => route.table === 'RW');
    expect(needsWrite).toBe(true);
    const statements = statementsOf(resources, getAttId(task.Properties.TaskRoleArn));
    const [tableId] = only(resources, 'AWS::DynamoDB::Table');
    const [keyId] = only(resources, 'AWS::KMS::Key');
    const byService = (prefix: string) =>
      statements.filter((statement) => actionsOf([statement]).some((action) => action.startsWith(prefix)));
    expect(actionsOf(byService('dynamodb:'))).toEqual(
      expect.arrayContaining([
        'dynamodb:GetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
      ]),
    );
    for (const statement of byService('dynamodb:'))
      expect(JSON.stringify(statement.Resource)).toContain(`"${tableId}"`);
    expect(byService('kms:')).toEqual([
      { Action: ['kms:Decrypt', 'kms:Encrypt'], Effect: 'Allow', Resource: { 'Fn::GetAtt': [keyId, 'Arn'] } },
    ]);
    expect(actionsOf(byService('s3:'))).toEqual(['s3:GetObject', 's3:ListBucket', 's3:PutObject']);
    // A wrong password on a push is a failed sign-in, announced on the default bus as the security log's.
    expect(byService('events:')).toEqual([
      {
        Action: 'events:PutEvents',
        Effect: 'Allow',
        Resource: expect.objectContaining({ 'Fn::Join': expect.anything() }),
        Condition: { StringEquals: { 'events:source': SECURITY_EVENT_SOURCE } },
      },
    ]);
    expect(JSON.stringify(byService('events:')[0]?.Resource)).toContain(':event-bus/default');
    // Nothing else: no Step Functions, no other service.
    const services = new Set(actionsOf(statements).map((action) => action.split(':')[0]));
    expect([...services].sort()).toEqual(['dynamodb', 'elasticfilesystem', 'events', 'kms', 's3']);
  });

  it('lets the execution role only pull the image and write the log group, kept a month', () => {
    const statements = statementsOf(resources, getAttId(task.Properties.ExecutionRoleArn));
    expect(actionsOf(statements)).toEqual([
      'ecr:BatchCheckLayerAvailability',
      'ecr:BatchGetImage',
      'ecr:GetAuthorizationToken',
      'ecr:GetDownloadUrlForLayer',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
    ]);
    const logs = (container.LogConfiguration as { LogDriver: string; Options: Record<string, unknown> })
      .Options;
    expect((container.LogConfiguration as { LogDriver: string }).LogDriver).toBe('awslogs');
    const logGroup = resources[refId(logs['awslogs-group'])] as CfnResource;
    expect(logGroup.Properties.RetentionInDays).toBe(30);
    expect(logGroup.DeletionPolicy).toBe('Retain');
  });

  it('is reached through an internal load balancer that health-checks /_health and drains before a task stops', () => {
    const [lbId, lb] = only(resources, 'AWS::ElasticLoadBalancingV2::LoadBalancer');
    expect(lb.Properties).toMatchObject({ Scheme: 'internal', Type: 'application' });
    const [, listener] = only(resources, 'AWS::ElasticLoadBalancingV2::Listener');
    expect(listener.Properties).toMatchObject({ LoadBalancerArn: { Ref: lbId }, Port: 80, Protocol: 'HTTP' });
    const [groupId, group] = only(resources, 'AWS::ElasticLoadBalancingV2::TargetGroup');
    expect(listener.Properties.DefaultActions).toEqual([
      { Type: 'forward', TargetGroupArn: { Ref: groupId } },
    ]);
    expect(group.Properties).toMatchObject({
      TargetType: 'ip',
      Port: GIT_FRONTEND_PORT,
      HealthCheckPath: GIT_FRONTEND_HEALTH_PATH,
      Matcher: { HttpCode: '200' },
    });
    expect(group.Properties.TargetGroupAttributes).toContainEqual({
      Key: 'deregistration_delay.timeout_seconds',
      Value: '900',
    });
    expect(JSON.stringify(container.HealthCheck)).toContain(
      `127.0.0.1:${GIT_FRONTEND_PORT}${GIT_FRONTEND_HEALTH_PATH}`,
    );
  });

  it('admits only CloudFront to the load balancer, only the load balancer to the task port, and lets the task out only to HTTPS and NFS', () => {
    const [lbId, lb] = only(resources, 'AWS::ElasticLoadBalancingV2::LoadBalancer');
    const lbGroup = getAttId((lb.Properties.SecurityGroups as unknown[])[0]);
    const taskGroup = getAttId(service.Properties.NetworkConfiguration.AwsvpcConfiguration.SecurityGroups[0]);
    const [efsGroupOwner] = ofType(resources, 'AWS::EFS::MountTarget').map(([, target]) =>
      getAttId((target.Properties.SecurityGroups as unknown[])[0]),
    );
    const ingress = (groupId: string) => [
      ...((resources[groupId] as CfnResource).Properties.SecurityGroupIngress ?? []),
      ...ofType(resources, 'AWS::EC2::SecurityGroupIngress')
        .filter(([, rule]) => getAttId(rule.Properties.GroupId) === groupId)
        .map(([, rule]) => rule.Properties),
    ];
    const egress = (groupId: string) => [
      ...((resources[groupId] as CfnResource).Properties.SecurityGroupEgress ?? []),
      ...ofType(resources, 'AWS::EC2::SecurityGroupEgress')
        .filter(([, rule]) => getAttId(rule.Properties.GroupId) === groupId)
        .map(([, rule]) => rule.Properties),
    ];

    // The load balancer: port 80 from CloudFront's VPC origins security group of its own VPC,
    // looked up once the distribution (with its VPC origin) exists; nothing from any address.
    const [lookupId, lookup] = only(resources, 'Custom::AWS');
    const [vpcId] = only(resources, 'AWS::EC2::VPC');
    expect(resources[lbGroup]?.Properties.VpcId).toEqual({ Ref: vpcId });
    // The call is JSON joined around the VPC's Ref: each reference becomes `Ref:<logical id>`.
    const joined = lookup.Properties.Update as { 'Fn::Join': [string, unknown[]] };
    const call = JSON.parse(
      joined['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : `Ref:${refId(part)}`)).join(''),
    );
    expect(call).toMatchObject({
      service: 'EC2',
      action: 'describeSecurityGroups',
      parameters: {
        Filters: [
          { Name: 'group-name', Values: ['CloudFront-VPCOrigins-Service-SG'] },
          { Name: 'vpc-id', Values: [`Ref:${vpcId}`] },
        ],
      },
      outputPaths: ['SecurityGroups.0.GroupId'],
    });
    const [distributionId] = only(resources, 'AWS::CloudFront::Distribution');
    const [vpcOriginId] = only(resources, 'AWS::CloudFront::VpcOrigin');
    expect(lookup.DependsOn).toEqual(expect.arrayContaining([distributionId, vpcOriginId]));
    expect(ingress(lbGroup)).toEqual([
      expect.objectContaining({
        IpProtocol: 'tcp',
        FromPort: 80,
        ToPort: 80,
        SourceSecurityGroupId: { 'Fn::GetAtt': [lookupId, 'SecurityGroups.0.GroupId'] },
      }),
    ]);
    const everyIngress = [
      ...ofType(resources, 'AWS::EC2::SecurityGroup').flatMap(
        ([, group]) => (group.Properties.SecurityGroupIngress ?? []) as Json[],
      ),
      ...ofType(resources, 'AWS::EC2::SecurityGroupIngress').map(([, rule]) => rule.Properties),
    ];
    for (const rule of everyIngress) {
      expect(rule.CidrIp, JSON.stringify(rule)).not.toBe('0.0.0.0/0');
      expect(rule.CidrIpv6, JSON.stringify(rule)).not.toBe('::/0');
      expect(rule.SourcePrefixListId, JSON.stringify(rule)).toBeUndefined();
    }
    expect(
      egress(lbGroup).map((rule) => `${rule.FromPort} ${getAttId(rule.DestinationSecurityGroupId)}`),
    ).toEqual([`${GIT_FRONTEND_PORT} ${taskGroup}`]);
    expect(lbId).toBeDefined();

    // The task: its port from the load balancer only.
    expect(ingress(taskGroup)).toEqual([
      expect.objectContaining({
        FromPort: GIT_FRONTEND_PORT,
        ToPort: GIT_FRONTEND_PORT,
        SourceSecurityGroupId: { 'Fn::GetAtt': [lbGroup, 'GroupId'] },
      }),
    ]);
    const out = egress(taskGroup).map((rule) =>
      rule.CidrIp === undefined
        ? `${rule.FromPort} ${getAttId(rule.DestinationSecurityGroupId)}`
        : `${rule.FromPort} ${rule.CidrIp}`,
    );
    expect(out.sort()).toEqual([`2049 ${efsGroupOwner}`, '443 0.0.0.0/0'].sort());
    expect(ingress(efsGroupOwner as string)).toContainEqual(
      expect.objectContaining({
        FromPort: 2049,
        SourceSecurityGroupId: { 'Fn::GetAtt': [taskGroup, 'GroupId'] },
      }),
    );
  });

  it('scales from one task on CPU, memory and requests per target', () => {
    const [targetId, target] = only(resources, 'AWS::ApplicationAutoScaling::ScalableTarget');
    expect(target.Properties).toMatchObject({
      MinCapacity: 1,
      MaxCapacity: 10,
      ScalableDimension: 'ecs:service:DesiredCount',
    });
    const metrics = ofType(resources, 'AWS::ApplicationAutoScaling::ScalingPolicy')
      .filter(([, policy]) => refId(policy.Properties.ScalingTargetId) === targetId)
      .map(
        ([, policy]) =>
          policy.Properties.TargetTrackingScalingPolicyConfiguration.PredefinedMetricSpecification
            .PredefinedMetricType,
      )
      .sort();
    expect(metrics).toEqual([
      'ALBRequestCountPerTarget',
      'ECSServiceAverageCPUUtilization',
      'ECSServiceAverageMemoryUtilization',
    ]);
  });
});

describe('the web distribution in front of the API and the Git front end', () => {
  let resources: Resources;
  let config: Json;

  beforeAll(() => {
    resources = loadDeployment(inject('cdkOut'), 'OAuthImportService').resources as Resources;
    config = only(resources, 'AWS::CloudFront::Distribution')[1].Properties.DistributionConfig;
  });

  const originOf = (id: string) =>
    (config.Origins as { Id: string }[]).find((origin) => origin.Id === id) as Json;

  it('sends everything but Git to the REST API stage over TLS, uncached, with every header but Host', () => {
    const [apiId] = only(resources, 'AWS::ApiGateway::RestApi');
    const api = originOf(config.DefaultCacheBehavior.TargetOriginId);
    expect(api).toMatchObject({
      OriginPath: `/${STAGE_NAME}`,
      CustomOriginConfig: { OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] },
    });
    expect(JSON.stringify(api.DomainName)).toContain(`{"Ref":"${apiId}"},".execute-api."`);
    expect(config.DefaultCacheBehavior).toMatchObject({
      ViewerProtocolPolicy: 'redirect-to-https',
      // Managed policies: CachingDisabled, AllViewerExceptHostHeader.
      CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
      OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac',
    });
    expect(config.DefaultCacheBehavior.AllowedMethods).toHaveLength(7);
  });

  it("sends every Git route's path to the load balancer as a VPC origin, uncached, with every header and CloudFront's", () => {
    const [lbId] = only(resources, 'AWS::ElasticLoadBalancingV2::LoadBalancer');
    const [vpcOriginId, vpcOrigin] = only(resources, 'AWS::CloudFront::VpcOrigin');
    expect(vpcOrigin.Properties.VpcOriginEndpointConfig).toMatchObject({
      Arn: { Ref: lbId },
      HTTPPort: 80,
      OriginProtocolPolicy: 'http-only',
    });
    const behaviors = config.CacheBehaviors as Json[];
    expect(behaviors.map((behavior) => behavior.PathPattern)).toEqual([
      ...new Set(GIT_FRONTEND_ROUTES.map(pathPattern)),
    ]);
    for (const behavior of behaviors) {
      const origin = originOf(behavior.TargetOriginId);
      expect(origin.VpcOriginConfig).toEqual({
        VpcOriginId: { 'Fn::GetAtt': [vpcOriginId, 'Id'] },
        OriginReadTimeout: 60,
      });
      expect(behavior).toMatchObject({
        ViewerProtocolPolicy: 'redirect-to-https',
        CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
        // AllViewerAndCloudFrontHeaders-2022-06: Authorization and Host included, and
        // CloudFront-Viewer-Address, by which the front end bounds anonymous clients.
        OriginRequestPolicyId: '33f36d7e-f396-46d9-90e0-52428a34d9dc',
        Compress: false,
      });
      expect(behavior.AllowedMethods).toContain('POST');
      expect(behavior.AllowedMethods).toContain('PUT');
    }
    for (const route of GIT_FRONTEND_ROUTES) {
      const sample = route.path.replace('{repo}', 'project.git').replace(/\{\w+\}/g, 'x');
      expect(
        behaviors.some((behavior) => patternMatches(behavior.PathPattern, sample)),
        sample,
      ).toBe(true);
    }
  });

  it('serves on its own cloudfront.net name by default, the web origin of the outputs', () => {
    expect(config.Aliases).toBeUndefined();
    expect(config.ViewerCertificate).toBeUndefined();
  });
});

describe('gitPathPatterns', () => {
  const route = (path: string, servedBy?: Route['servedBy']): Route => ({
    method: 'GET',
    path,
    handler: 'x/y',
    auth: 'none',
    scopes: [],
    media: 'git',
    table: 'RO',
    ...(servedBy === undefined ? {} : { servedBy }),
  });

  it('is every Git row of the route table, and no API row matches one', () => {
    expect(GIT_FRONTEND_ROUTES.map((candidate) => candidate.handler).sort()).toEqual(
      ROUTES.filter((candidate) => candidate.handler.startsWith('git/'))
        .map((candidate) => candidate.handler)
        .sort(),
    );
    expect([...GIT_FRONTEND_ROUTES, ...API_ROUTES]).toHaveLength(ROUTES.length);
    expect(gitPathPatterns(GIT_FRONTEND_ROUTES, API_ROUTES)).toContain('/*/*/git-receive-pack');
  });

  it('refuses a pattern that would take an API route', () => {
    expect(() =>
      gitPathPatterns(
        [route('/{owner}/{repo}/info/refs', 'git-frontend')],
        [route('/api/v3/{owner}/info/refs')],
      ),
    ).toThrow(
      /GET \/api\/v3\/\{owner\}\/info\/refs would go to the Git front end \(path pattern \/\*\/\*\/info\/refs\)/,
    );
  });

  it('matches as CloudFront does: * spans segments, ? one character, the rest literally', () => {
    expect(patternMatches('/*/*/info/refs', '/a/b.git/info/refs')).toBe(true);
    expect(patternMatches('/*/*/info/refs', '/a/b/c/info/refs')).toBe(true);
    expect(patternMatches('/*/*/info/refs', '/a/b.git/info/refs/x')).toBe(false);
    expect(patternMatches('/a?c', '/abc')).toBe(true);
    expect(patternMatches('/a.c', '/abc')).toBe(false);
  });
});
