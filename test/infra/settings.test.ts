import { App, RemovalPolicy } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CONTEXT, readSettings } from '#cdk/settings';
import { ENV } from '#shared/config';
import { type SynthesizedService, synthService } from '#test/synth';

const settingsOf = (context: Record<string, unknown>) => readSettings(new App({ context }).node);

const CERTIFICATE = 'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';

describe('readSettings', () => {
  it('defaults to a retained github stack named OAuthImportService with no public URL', () => {
    expect(settingsOf({})).toEqual({
      stackName: 'OAuthImportService',
      removalPolicy: RemovalPolicy.RETAIN,
      vendor: 'github',
      publicUrl: undefined,
      certificateArn: undefined,
      throttling: { rateLimit: 100, burstLimit: 200 },
      webAclArn: undefined,
      distributionWebAclArn: undefined,
      apiGatewayCloudWatchRole: true,
      natGateways: 1,
      importChunkSeconds: 600,
      largeFileBytes: 104_857_600,
      gitFrontendTasks: { min: 1, max: 10 },
      importWorkerConcurrency: undefined,
      importBatchConcurrency: 4,
    });
  });

  it('parses the strings `cdk -c key=value` passes', () => {
    const settings = settingsOf({
      [CONTEXT.throttlingRateLimit]: '25',
      [CONTEXT.throttlingBurstLimit]: '50',
      [CONTEXT.apiGatewayCloudWatchRole]: 'false',
      [CONTEXT.removalPolicy]: 'destroy',
      [CONTEXT.publicUrl]: 'https://api.example.com/',
      [CONTEXT.certificateArn]: CERTIFICATE,
      [CONTEXT.natGateways]: '2',
      [CONTEXT.importChunkSeconds]: '840',
      [CONTEXT.largeFileBytes]: '1024',
      [CONTEXT.gitFrontendMinTasks]: '2',
      [CONTEXT.gitFrontendMaxTasks]: '4',
      [CONTEXT.importWorkerConcurrency]: '50',
      [CONTEXT.importBatchConcurrency]: '8',
    });
    expect(settings).toMatchObject({
      importWorkerConcurrency: 50,
      importBatchConcurrency: 8,
      certificateArn: CERTIFICATE,
      gitFrontendTasks: { min: 2, max: 4 },
      natGateways: 2,
      importChunkSeconds: 840,
      largeFileBytes: 1024,
      throttling: { rateLimit: 25, burstLimit: 50 },
      apiGatewayCloudWatchRole: false,
      removalPolicy: RemovalPolicy.DESTROY,
      publicUrl: 'https://api.example.com',
    });
  });

  it.each([
    [CONTEXT.removalPolicy, 'snapshot', /'retain' or 'destroy'/],
    [CONTEXT.vendor, 'GitHub', /lower-case/],
    [CONTEXT.publicUrl, 'api.example.com', /absolute URL/],
    [CONTEXT.publicUrl, 'http://api.example.com', /https URL/],
    [CONTEXT.throttlingRateLimit, '0', /positive integer/],
    [CONTEXT.throttlingBurstLimit, 'many', /positive integer/],
    [CONTEXT.apiGatewayCloudWatchRole, 'yes', /true or false/],
    [CONTEXT.natGateways, '0', /positive integer/],
    [CONTEXT.natGateways, '3', /at most 2 \(one per availability zone\)/],
    [CONTEXT.importChunkSeconds, '841', /at most 840/],
    [CONTEXT.largeFileBytes, '1.5', /positive integer/],
    [CONTEXT.gitFrontendMinTasks, '0', /positive integer/],
    [CONTEXT.importWorkerConcurrency, '0', /positive integer/],
    [CONTEXT.importWorkerConcurrency, 'unlimited', /positive integer/],
    [
      CONTEXT.gitFrontendMinTasks,
      '11',
      /gitFrontendMinTasks \(11\) must be at most gitFrontendMaxTasks \(10\)/,
    ],
    [
      CONTEXT.publicUrl,
      'https://api.example.com',
      /needs certificateArn: an ACM certificate in us-east-1 for api.example.com/,
    ],
    [CONTEXT.certificateArn, CERTIFICATE, /certificateArn needs publicUrl/],
  ])('rejects %s=%s', (key, value, message) => {
    expect(() => settingsOf({ [key]: value })).toThrow(message);
  });

  it.each([
    ['https://example.com/github', /without port or path/],
    ['https://example.com:8443', /without port or path/],
  ])('rejects publicUrl=%s: the distribution serves a host', (value, message) => {
    expect(() => settingsOf({ [CONTEXT.publicUrl]: value, [CONTEXT.certificateArn]: CERTIFICATE })).toThrow(
      message,
    );
  });

  it('rejects a certificate outside us-east-1, where CloudFront cannot read it', () => {
    expect(() =>
      settingsOf({
        [CONTEXT.publicUrl]: 'https://api.example.com',
        [CONTEXT.certificateArn]: CERTIFICATE.replace('us-east-1', 'eu-west-1'),
      }),
    ).toThrow(/ACM certificate ARN in us-east-1/);
  });
});

describe('ServiceStack with deployment context', () => {
  let synth: SynthesizedService;
  let nagViolations: string[];

  beforeAll(() => {
    const validate = vi.spyOn(AwsSolutionsChecks.prototype, 'validate');
    try {
      synth = synthService({
        context: {
          [CONTEXT.stackName]: 'OAuthImportDev',
          [CONTEXT.vendor]: 'acme-git',
          [CONTEXT.publicUrl]: 'https://api.example.com',
          [CONTEXT.certificateArn]: CERTIFICATE,
          [CONTEXT.distributionWebAclArn]: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/web/4e5f6a7b',
          [CONTEXT.gitFrontendMinTasks]: '2',
          [CONTEXT.removalPolicy]: 'destroy',
          [CONTEXT.throttlingRateLimit]: '10',
          [CONTEXT.throttlingBurstLimit]: '20',
          [CONTEXT.webAclArn]: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/api/0a1b2c3d',
          [CONTEXT.apiGatewayCloudWatchRole]: 'false',
          [CONTEXT.natGateways]: '2',
          [CONTEXT.importChunkSeconds]: '120',
          [CONTEXT.importWorkerConcurrency]: '40',
        },
      });
      nagViolations = validate.mock.results.flatMap((result) =>
        (result.value as ReturnType<AwsSolutionsChecks['validate']>).violations.map(
          (violation) => violation.ruleName,
        ),
      );
    } finally {
      validate.mockRestore();
    }
  });
  afterAll(() => synth?.dispose());

  it('names the stack from context', () => {
    expect(synth.stack.stackName).toBe('OAuthImportDev');
  });

  it('gives every function and the Git front end the vendor and the public URLs of the custom domain', () => {
    const custom = {
      [ENV.vendor]: 'acme-git',
      [ENV.baseUrl]: 'https://api.example.com/api/v3',
      [ENV.authUrl]: 'https://api.example.com',
      [ENV.settingsUrl]: 'https://api.example.com',
      [ENV.importUrl]: 'https://api.example.com',
    };
    // Route functions (nested stacks) and the workflow's (parent) alike; not CDK's own provider.
    const functions = synth.deployment
      .ofType('AWS::Lambda::Function')
      .map(([, fn]) => fn)
      .filter((fn) => fn.Properties.Environment !== undefined);
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) expect(fn.Properties.Environment.Variables).toMatchObject(custom);
    const [task] = synth.deployment.ofType('AWS::ECS::TaskDefinition').map(([, resource]) => resource);
    const variables = task?.Properties.ContainerDefinitions[0].Environment as {
      Name: string;
      Value: unknown;
    }[];
    expect(Object.fromEntries(variables.map(({ Name, Value }) => [Name, Value]))).toMatchObject(custom);
    expect(synth.template.toJSON().Outputs.BaseUrl.Value).toBe('https://api.example.com/api/v3');
    expect(synth.template.toJSON().Outputs.WebUrl.Value).toBe('https://api.example.com');
  });

  it('serves the custom domain from the web distribution with its certificate and web ACL', () => {
    synth.template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: {
        Aliases: ['api.example.com'],
        ViewerCertificate: {
          AcmCertificateArn: CERTIFICATE,
          MinimumProtocolVersion: 'TLSv1.2_2021',
          SslSupportMethod: 'sni-only',
        },
        WebACLId: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/web/4e5f6a7b',
      },
    });
  });

  it('keeps at least the context number of Git front end tasks', () => {
    synth.template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MinCapacity: 2,
      MaxCapacity: 10,
    });
    synth.template.hasResourceProperties('AWS::ECS::Service', { DesiredCount: 2 });
  });

  it('lets a development stack delete its table and log groups', () => {
    const table = Object.values(synth.template.findResources('AWS::DynamoDB::Table'))[0];
    expect(table?.DeletionPolicy).toBe('Delete');
    expect(table?.Properties.DeletionProtectionEnabled).toBe(false);
    const logGroups = synth.deployment.ofType('AWS::Logs::LogGroup');
    expect(logGroups.some(([id]) => id.includes('/'))).toBe(true);
    for (const [, logGroup] of logGroups) {
      expect(logGroup.DeletionPolicy).toBe('Delete');
    }
  });

  it('throttles the stage with the context limits', () => {
    synth.template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: [
        { HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
      ],
    });
  });

  it('gives the Git workers the chunk budget and the VPC its NAT gateways from context', () => {
    synth.template.resourceCountIs('AWS::EC2::NatGateway', 2);
    const workers = synth.deployment
      .ofType('AWS::Lambda::Function')
      .map(([, fn]) => fn)
      .filter((fn) => fn.Properties.PackageType === 'Image')
      // The sync scheduler is an image function too (its origin check runs git), with no chunks.
      .filter((fn) => fn.Properties.ImageConfig?.Command?.[0] !== 'start-due-syncs.handler');
    expect(workers).toHaveLength(4);
    for (const worker of workers) {
      expect(worker.Properties.Environment.Variables[ENV.importChunkSeconds]).toBe('120');
      // At most 40 imports in each Git step at once, and 40 kept for them in the account.
      expect(worker.Properties.ReservedConcurrentExecutions).toBe(40);
    }
    // Nothing else is reserved: the routes and the table-only steps share the account's pool.
    const others = synth.deployment
      .ofType('AWS::Lambda::Function')
      .map(([, fn]) => fn)
      .filter((fn) => !workers.includes(fn));
    expect(others.length).toBeGreaterThan(0);
    for (const fn of others) expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
    const machine = Object.values(synth.template.findResources('AWS::StepFunctions::StateMachine'))[0];
    expect(machine?.Properties.StateMachineName).toBe('OAuthImportDev-SourceImport');
  });

  it('associates the web ACL with the stage and leaves the account logging role alone', () => {
    synth.template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
    synth.template.resourceCountIs('AWS::ApiGateway::Account', 0);
    expect(nagViolations).toEqual([]);
  });
});
