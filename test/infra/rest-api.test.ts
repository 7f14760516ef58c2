import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES, assertDeployableRoutes, STAGE_NAME } from '#cdk/rest-api';
import { groupRoutes, routeStackId } from '#cdk/route-groups';
import { SYNC_SCHEDULER, WEBHOOK_DELIVERY, WORKFLOW_TASKS } from '#cdk/workflow-tasks';
import { ENV } from '#shared/config';
import { acceptsTokens, ROUTES, type Route, routeId, signsIn } from '#shared/routes';
import type { CfnResource } from '#test/deployment';
import { type SynthesizedService, synthService } from '#test/synth';

const WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
];

function handlerModule(route: Route): string {
  return fileURLToPath(new URL(`../../functions/http/${route.handler}.ts`, import.meta.url));
}

function get(resources: Record<string, CfnResource>, logicalId: string): CfnResource {
  const resource = resources[logicalId];
  if (!resource) throw new Error(`no resource ${logicalId} in the template`);
  return resource;
}

/** Full API Gateway path of each AWS::ApiGateway::Resource, rebuilt from ParentId/PathPart. */
function resourcePaths(resources: Record<string, CfnResource>): Map<string, string> {
  const paths = new Map<string, string>();
  const pathOf = (logicalId: string): string => {
    const known = paths.get(logicalId);
    if (known !== undefined) return known;
    const { ParentId, PathPart } = get(resources, logicalId).Properties as {
      ParentId: { Ref?: string };
      PathPart: string;
    };
    const parent = ParentId.Ref;
    const path = `${parent === undefined ? '' : pathOf(parent)}/${PathPart}`;
    paths.set(logicalId, path);
    return path;
  };
  for (const [logicalId, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::ApiGateway::Resource') pathOf(logicalId);
  }
  return paths;
}

interface Statement {
  readonly Action: string | string[];
  readonly Resource?: unknown;
  readonly Condition?: Record<string, Record<string, unknown>>;
}

function policyStatements(resources: Record<string, CfnResource>, roleLogicalId: string): Statement[] {
  return Object.values(resources)
    .filter((resource) => resource.Type === 'AWS::IAM::Policy')
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleLogicalId }]))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

/** Actions granted without conditions. */
function policyActions(resources: Record<string, CfnResource>, roleLogicalId: string): string[] {
  return policyStatements(resources, roleLogicalId)
    .filter((statement) => statement.Condition === undefined)
    .flatMap((statement) => statement.Action);
}

describe('ServiceRestApi', () => {
  let synth: SynthesizedService;
  let resources: Record<string, CfnResource>;

  beforeAll(() => {
    synth = synthService();
    // The parent and the nested stacks as one, references followed across them (test/support/deployment.ts).
    resources = synth.deployment.resources;
  });
  afterAll(() => synth?.dispose());

  function functionOf(route: Route) {
    const fn = synth.stack.restApi.functions.get(routeId(route));
    if (!fn) throw new Error(`no function for ${route.handler}`);
    return fn;
  }
  const functionResource = (route: Route): CfnResource => get(resources, synth.logicalId(functionOf(route)));

  it('creates exactly one function per route it serves, bundled from the route handler module', () => {
    expect(API_ROUTES.length).toBeLessThan(ROUTES.length);
    // Besides the import workflow's one function per Task (test/infra/import-workflow.test.ts), the
    // sync scheduler and the webhook delivery function, and CDK's provider that looks up
    // CloudFront's VPC origins security group (test/infra/git-frontend.test.ts).
    expect(synth.deployment.ofType('AWS::Lambda::Function')).toHaveLength(
      API_ROUTES.length + WORKFLOW_TASKS.length + [SYNC_SCHEDULER, WEBHOOK_DELIVERY].length + 1,
    );
    for (const route of API_ROUTES) {
      const fn = functionOf(route);
      expect(fn.entry).toBe(handlerModule(route));
      expect(existsSync(fn.entry)).toBe(true);
      expect(functionResource(route).Properties.Description).toBe(`${route.method} ${route.path}`);
    }
  });

  it("answers the CORS preflight of every `cors` route's path with a mock integration, no function", () => {
    const paths = resourcePaths(resources);
    const preflights = Object.values(resources).filter(
      (resource) =>
        resource.Type === 'AWS::ApiGateway::Method' && resource.Properties.HttpMethod === 'OPTIONS',
    );
    const corsPaths = [
      ...new Set(API_ROUTES.filter((route) => route.cors).map((route) => route.path)),
    ].sort();
    expect(corsPaths).toContain('/login/oauth/access_token');
    const preflightPaths = preflights.map((method) =>
      paths.get((method.Properties.ResourceId as { Ref: string }).Ref),
    );
    expect(preflightPaths.sort()).toEqual(corsPaths);
    for (const method of preflights) {
      const integration = method.Properties.Integration as {
        Type: string;
        IntegrationResponses: Array<{ StatusCode: string; ResponseParameters: Record<string, string> }>;
      };
      expect(integration.Type).toBe('MOCK');
      const answer = integration.IntegrationResponses[0];
      expect(answer?.StatusCode).toBe('204');
      expect(answer?.ResponseParameters['method.response.header.Access-Control-Allow-Origin']).toBe("'*'");
      expect(Object.keys(answer?.ResponseParameters ?? {}).join()).not.toContain('Credentials');
    }
  });

  it('has a method for every route on its resource path, proxying to that route function', () => {
    const paths = resourcePaths(resources);
    // A method on the API's root (`GET /`) names the root resource by the API's attribute.
    const methodPath = (method: CfnResource): string | undefined => {
      const id = method.Properties.ResourceId as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
      if (id.Ref !== undefined) return paths.get(id.Ref);
      return id['Fn::GetAtt']?.[1] === 'RootResourceId' ? '/' : undefined;
    };
    const methods = Object.values(resources).filter(
      (resource) =>
        resource.Type === 'AWS::ApiGateway::Method' && resource.Properties.HttpMethod !== 'OPTIONS',
    );
    expect(methods).toHaveLength(API_ROUTES.length);
    for (const route of API_ROUTES) {
      const method = methods.find(
        (candidate) =>
          candidate.Properties.HttpMethod === route.method && methodPath(candidate) === route.path,
      );
      expect(method, `${route.method} ${route.path}`).toBeDefined();
      expect(method?.Properties.AuthorizationType).toBe('NONE');
      const integration = method?.Properties.Integration as {
        Type: string;
        IntegrationHttpMethod: string;
        Uri: unknown;
      };
      expect(integration.Type).toBe('AWS_PROXY');
      expect(integration.IntegrationHttpMethod).toBe('POST');
      // The parent reads the ARN from the nested stack's output; followed, it is the function's.
      const functionArns = JSON.stringify(integration.Uri).match(/"Fn::GetAtt":\["[A-Za-z0-9/]+","Arn"\]/g);
      expect(functionArns).toEqual([`"Fn::GetAtt":["${synth.logicalId(functionOf(route))}","Arn"]`]);
    }
  });

  it('lets API Gateway invoke each function from its own method only', () => {
    for (const route of API_ROUTES) {
      const permissions = Object.values(resources).filter(
        (resource) =>
          resource.Type === 'AWS::Lambda::Permission' &&
          JSON.stringify(resource.Properties.FunctionName).includes(
            `"${synth.logicalId(functionOf(route))}"`,
          ),
      );
      expect(permissions).toHaveLength(1);
      expect(permissions[0]?.Properties.Principal).toBe('apigateway.amazonaws.com');
      const methodArnSuffix = `/${STAGE_NAME}/${route.method}${route.path.replace(/\{[^}]+\}/g, '*')}"`;
      const sourceArn = JSON.stringify(permissions[0]?.Properties.SourceArn);
      expect(sourceArn).toContain(methodArnSuffix);
      // This API (a nested stack parameter, followed to the parent's RestApi).
      expect(sourceArn).toContain(`{"Ref":"${synth.logicalId(synth.stack.restApi.api)}"}`);
    }
  });

  it("puts each route's function, role, policy, log group and invoke permission in its group's nested stack", () => {
    const groups = groupRoutes(API_ROUTES);
    for (const [group, routes] of groups) {
      const prefix = `${routeStackId(group)}/`;
      expect(get(resources, routeStackId(group)).Type).toBe('AWS::CloudFormation::Stack');
      for (const route of routes) {
        const fnId = synth.logicalId(functionOf(route));
        expect(fnId.startsWith(prefix), route.handler).toBe(true);
        const fn = functionResource(route).Properties;
        const role = (fn.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
        const logGroup = (fn.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
        const policies = Object.entries(resources).filter(
          ([, resource]) =>
            resource.Type === 'AWS::IAM::Policy' &&
            JSON.stringify(resource.Properties.Roles) === JSON.stringify([{ Ref: role }]),
        );
        const permissions = Object.entries(resources).filter(
          ([, resource]) =>
            resource.Type === 'AWS::Lambda::Permission' &&
            JSON.stringify(resource.Properties.FunctionName).includes(`"${fnId}"`),
        );
        expect(policies, route.handler).toHaveLength(1);
        expect(permissions, route.handler).toHaveLength(1);
        for (const id of [role, logGroup, policies[0]?.[0], permissions[0]?.[0]]) {
          expect(id?.startsWith(prefix), `${route.handler}: ${id}`).toBe(true);
        }
      }
    }
    // The API, its resources and methods stay in the parent (no prefix).
    for (const [id, resource] of Object.entries(resources)) {
      if (resource.Type.startsWith('AWS::ApiGateway::')) expect(id, resource.Type).not.toContain('/');
    }
    expect([...groups.values()].flat()).toHaveLength(API_ROUTES.length);
  });

  it('gives every function the house runtime, logging, tracing and configuration', () => {
    const distributionId = synth.logicalId(synth.stack.web.distribution);
    for (const route of API_ROUTES) {
      const fn = functionResource(route).Properties;
      expect(fn).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        MemorySize: 512,
        Timeout: 10,
        TracingConfig: { Mode: 'Active' },
      });
      const variables = (fn.Environment as { Variables: Record<string, unknown> }).Variables;
      const uses = new Set(route.uses ?? []);
      // The public URLs name the web distribution (a nested stack's WebOrigin parameter, followed).
      const origin = { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }]] };
      expect(variables, route.handler).toEqual({
        [ENV.vendor]: 'github',
        [ENV.importBatchConcurrency]: '4',
        [ENV.baseUrl]: { 'Fn::Join': ['', [origin, '/api/v3']] },
        [ENV.authUrl]: origin,
        [ENV.settingsUrl]: origin,
        [ENV.importUrl]: origin,
        [ENV.tableName]: { Ref: synth.logicalId(synth.stack.table) },
        AWS_NODEJS_CONNECTION_REUSE_ENABLED: '1',
        NODE_OPTIONS: '--enable-source-maps',
        // Only the functions that sign users in, drive imports or seal hook secrets know the secrets key (asserted below).
        ...(signsIn(route) || uses.has('import-workflow') || uses.has('webhooks')
          ? { [ENV.secretsKmsKeyId]: { 'Fn::GetAtt': [synth.logicalId(synth.stack.secretsKey), 'Arn'] } }
          : {}),
        ...(uses.has('import-workflow')
          ? {
              [ENV.importStateMachineArn]: {
                Ref: synth.logicalId(synth.stack.importWorkflow.stateMachine),
              },
            }
          : {}),
        ...(uses.has('repositories')
          ? { [ENV.importWorkDir]: '/mnt/data/imports', [ENV.repositoriesDir]: '/mnt/data/repositories' }
          : {}),
        ...(uses.has('lfs-objects')
          ? { [ENV.lfsBucket]: { Ref: synth.logicalId(synth.stack.lfsObjects.bucket) } }
          : {}),
        ...(uses.has('webhooks')
          ? {
              [ENV.webhookDeliveryFunction]: {
                'Fn::GetAtt': [synth.logicalId(synth.stack.webhookDelivery.function), 'Arn'],
              },
            }
          : {}),
      });
      const logGroup = (fn.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(get(resources, logGroup).Properties.RetentionInDays).toBe(30);
    }
  });

  it('grants read-only routes no write actions and read-write routes the write actions', () => {
    for (const route of API_ROUTES) {
      const role = (functionResource(route).Properties.Role as { 'Fn::GetAtt': [string, string] })[
        'Fn::GetAtt'
      ][0];
      const actions = policyActions(resources, role);
      expect(actions).toContain('dynamodb:GetItem');
      expect(actions).toContain('dynamodb:Query');
      for (const write of WRITE_ACTIONS) {
        expect(actions.includes(write), `${route.handler} (${route.table}) ${write}`).toBe(
          route.table === 'RW',
        );
      }
      expect(
        (get(resources, role).Properties.ManagedPolicyArns as unknown[] | undefined) ?? [],
        `${route.handler} role has no managed policies`,
      ).toEqual([]);
    }
  });

  it("lets read-only routes that accept tokens update nothing but a token's lastUsedAt", () => {
    for (const route of API_ROUTES.filter((candidate) => candidate.table === 'RO')) {
      const role = (functionResource(route).Properties.Role as { 'Fn::GetAtt': [string, string] })[
        'Fn::GetAtt'
      ][0];
      const conditioned = policyStatements(resources, role).filter(
        (statement) => statement.Condition !== undefined,
      );
      const tokenUse = conditioned.filter((statement) =>
        JSON.stringify(statement.Condition).includes('lastUsedAt'),
      );
      if (!acceptsTokens(route)) {
        expect(tokenUse, route.handler).toEqual([]);
        continue;
      }
      expect(tokenUse, route.handler).toHaveLength(1);
      expect(tokenUse[0]).toMatchObject({
        Action: 'dynamodb:UpdateItem',
        Condition: {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['PK', 'SK', 'lastUsedAt', 'tokenHash'] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
        },
      });
    }
  });

  it('lets read-only sign-in routes update only the failed-login, OTP-step, password-hash and seed attributes', () => {
    for (const route of API_ROUTES.filter((candidate) => candidate.table === 'RO')) {
      const role = (functionResource(route).Properties.Role as { 'Fn::GetAtt': [string, string] })[
        'Fn::GetAtt'
      ][0];
      const signIn = policyStatements(resources, role).filter((statement) =>
        JSON.stringify(statement.Condition ?? {}).includes('attempts'),
      );
      expect(signIn, route.handler).toHaveLength(signsIn(route) ? 1 : 0);
      if (!signsIn(route)) continue;
      expect(signIn[0]).toMatchObject({
        Action: 'dynamodb:UpdateItem',
        Condition: {
          'ForAllValues:StringEquals': {
            'dynamodb:Attributes': [
              'PK',
              'SK',
              'attempts',
              'pending',
              '_type',
              'expiresAt',
              'updatedAt',
              'lastOtpStep',
              'passwordHash',
              'otpSecret',
            ],
          },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
        },
      });
    }
  });

  it('has one KMS key for secrets, with rotation, usable only by the functions that sign users in, drive imports or seal hook secrets (and the Git workers, front end and webhook delivery)', () => {
    expect(synth.deployment.ofType('AWS::KMS::Key')).toHaveLength(1);
    synth.template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    const keyId = synth.logicalId(synth.stack.secretsKey);
    const keyArn = { 'Fn::GetAtt': [keyId, 'Arn'] };
    const expectedSigners = API_ROUTES.filter(signsIn).map((route) => route.handler);
    expect(expectedSigners).toEqual(
      expect.arrayContaining(['pages/login', 'pages/two-factor', 'users/get-authenticated']),
    );
    expect(expectedSigners).not.toContain('applications/check-token');
    expect(expectedSigners).not.toContain('oauth/access-token');
    for (const route of API_ROUTES) {
      const role = (functionResource(route).Properties.Role as { 'Fn::GetAtt': [string, string] })[
        'Fn::GetAtt'
      ][0];
      const kms = policyStatements(resources, role).filter((statement) =>
        JSON.stringify(statement.Action).includes('kms:'),
      );
      const environment = (
        functionResource(route).Properties.Environment as { Variables: Record<string, unknown> }
      ).Variables;
      const drivesImports = (route.uses ?? []).includes('import-workflow');
      const sealsHookSecrets = (route.uses ?? []).includes('webhooks');
      const opensCredentials = (route.uses ?? []).includes('import-credentials');
      const expected = [
        ...(signsIn(route)
          ? [{ Action: ['kms:Decrypt', 'kms:Encrypt'], Effect: 'Allow', Resource: keyArn }]
          : []),
        // Seals origin credentials (test/infra/import-workflow.test.ts asserts the rest of it); a
        // route that also opens them (a batch made from a waiting import) has both in one statement.
        ...(drivesImports
          ? [
              {
                Action: opensCredentials ? ['kms:Decrypt', 'kms:Encrypt'] : 'kms:Encrypt',
                Effect: 'Allow',
                Resource: keyArn,
                Condition: { StringEquals: { 'kms:EncryptionContext:purpose': 'import-credentials' } },
              },
            ]
          : []),
        // Seals hook secrets only (test/infra/webhook-delivery.test.ts asserts who opens them).
        ...(sealsHookSecrets
          ? [
              {
                Action: 'kms:Encrypt',
                Effect: 'Allow',
                Resource: keyArn,
                Condition: { StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-secret' } },
              },
            ]
          : []),
      ];
      expect(kms, route.handler).toHaveLength(expected.length);
      expect(kms, route.handler).toEqual(expect.arrayContaining(expected));
      expect(environment[ENV.secretsKmsKeyId], route.handler).toEqual(
        expected.length === 0 ? undefined : keyArn,
      );
    }
    // Nothing else in the stack may use the key (the key policy only delegates to the account's IAM).
    const others = Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::IAM::Policy')
      .filter(([, resource]) => JSON.stringify(resource.Properties).includes(`"${keyId}"`))
      .map(([, resource]) => JSON.stringify(resource.Properties.Roles));
    const signerRoles = API_ROUTES.filter(
      (route) =>
        signsIn(route) ||
        (route.uses ?? []).includes('import-workflow') ||
        (route.uses ?? []).includes('webhooks'),
    ).map((route) =>
      JSON.stringify([
        {
          Ref: (functionResource(route).Properties.Role as { 'Fn::GetAtt': [string, string] })[
            'Fn::GetAtt'
          ][0],
        },
      ]),
    );
    // The Git workers open import credentials, the steps that end an import seal hook secrets (never
    // needed: they only queue deliveries, but they share the hooks' grant) (test/infra/import-workflow.test.ts).
    const workerRoles = WORKFLOW_TASKS.filter(
      (task) => task.packaging === 'image' || task.name === 'Complete' || task.name === 'RecordFailure',
    ).map((task) => {
      const worker = Object.values(resources).find(
        (resource) =>
          resource.Type === 'AWS::Lambda::Function' &&
          resource.Properties.Description === `Import workflow: ${task.name}`,
      );
      if (worker === undefined) throw new Error(`no function for ${task.name}`);
      return JSON.stringify([
        { Ref: (worker.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0] },
      ]);
    });
    // The Git front end signs Git clients in (asserted in test/infra/git-frontend.test.ts).
    const frontEndRole = JSON.stringify([
      { Ref: synth.logicalId(synth.stack.gitFrontend.taskDefinition.taskRole) },
    ]);
    // The sync scheduler opens import credentials (test/infra/sync-scheduler.test.ts); the webhook
    // delivery function opens hook secrets (test/infra/webhook-delivery.test.ts).
    const roleOfFunction = (fn: { role?: unknown }) =>
      JSON.stringify([{ Ref: synth.logicalId(fn.role as never) }]);
    const otherRoles = [
      roleOfFunction(synth.stack.webhookDelivery.function),
      ...Object.values(resources)
        .filter(
          (resource) =>
            resource.Type === 'AWS::Lambda::Function' &&
            resource.Properties.Description === 'Starts the scheduled syncs of followed imports that are due',
        )
        .map((fn) =>
          JSON.stringify([
            { Ref: (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0] },
          ]),
        ),
    ];
    expect(new Set(others)).toEqual(new Set([...signerRoles, ...workerRoles, frontEndRole, ...otherRoles]));
  });

  it('answers unknown paths and methods with GitHub 404 JSON', () => {
    synth.template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'MISSING_AUTHENTICATION_TOKEN',
      StatusCode: '404',
      ResponseParameters: { 'gatewayresponse.header.Content-Type': "'application/json; charset=utf-8'" },
      ResponseTemplates: {
        'application/json': '{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}',
      },
    });
  });

  it('answers oversized requests with 413 JSON and gateway failures with GitHub 5xx JSON', () => {
    synth.template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'REQUEST_TOO_LARGE',
      StatusCode: '413',
      ResponseParameters: { 'gatewayresponse.header.Content-Type': "'application/json; charset=utf-8'" },
    });
    const serverError = Object.values(resources).find(
      (resource) =>
        resource.Type === 'AWS::ApiGateway::GatewayResponse' &&
        resource.Properties.ResponseType === 'DEFAULT_5XX',
    );
    expect(serverError?.Properties.StatusCode).toBeUndefined();
    expect(serverError?.Properties.ResponseTemplates).toEqual({
      'application/json': '{"message":"Server Error","documentation_url":"https://docs.github.com/rest"}',
    });
  });

  it("answers a route whose function Lambda throttles with GitHub's 503 JSON and Retry-After", () => {
    // Lambda's refusal of the invocation (429 TooManyRequestsException) is API Gateway's
    // INTEGRATION_FAILURE; without a response of that type it would be DEFAULT_5XX's 500.
    synth.template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'INTEGRATION_FAILURE',
      StatusCode: '503',
      ResponseParameters: {
        'gatewayresponse.header.Content-Type': "'application/json; charset=utf-8'",
        'gatewayresponse.header.Retry-After': "'5'",
      },
      ResponseTemplates: {
        'application/json':
          '{"message":"Service Unavailable","documentation_url":"https://docs.github.com/rest"}',
      },
    });
  });

  it('logs every request as JSON, traces and throttles the stage', () => {
    const [stageId, ...otherStages] = Object.keys(synth.template.findResources('AWS::ApiGateway::Stage'));
    expect(otherStages).toEqual([]);
    const stage = get(resources, stageId ?? '');
    const { Format } = stage.Properties.AccessLogSetting as { Format: string };
    const format = JSON.parse(Format) as Record<string, string>;
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      method: '$context.httpMethod',
      path: '$context.path',
      status: '$context.status',
      latency: '$context.responseLatency',
    });
    expect(stage.Properties).toMatchObject({
      TracingEnabled: true,
      MethodSettings: [
        {
          HttpMethod: '*',
          ResourcePath: '/*',
          LoggingLevel: 'ERROR',
          DataTraceEnabled: false,
          ThrottlingRateLimit: 100,
          ThrottlingBurstLimit: 200,
        },
      ],
    });
  });

  it('outputs the API URL, the web URL and base URL on the distribution, the table name, the import state machine and the LFS bucket', () => {
    const outputs = synth.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual([
      'ApiUrl',
      'BaseUrl',
      'DistributionDomainName',
      'ImportStateMachineArn',
      'LfsBucketName',
      'SecretsKeyArn',
      'TableName',
      'WebUrl',
    ]);
    expect(JSON.stringify(outputs.BaseUrl?.Value)).toContain(synth.logicalId(synth.stack.web.distribution));
    expect(JSON.stringify(outputs.BaseUrl?.Value)).toMatch(/"\/api\/v3"\]\]\}$/);
    expect(outputs.TableName?.Value).toEqual({ Ref: synth.logicalId(synth.stack.table) });
  });
});

describe('assertDeployableRoutes', () => {
  const route = (method: Route['method'], path: string, handler: string): Route => ({
    method,
    path,
    handler,
    auth: 'none',
    scopes: [],
    media: 'json',
    table: 'RO',
  });

  it('accepts the route table', () => {
    expect(() => assertDeployableRoutes(ROUTES)).not.toThrow();
  });

  it('rejects sibling path variables with different names', () => {
    const routes = [
      route('GET', '/repos/{owner}/{repo}', 'repos/get'),
      route('GET', '/repos/{org}', 'orgs/get'),
    ];
    expect(() => assertDeployableRoutes(routes)).toThrow(/\{owner\} and \{org\}/);
  });

  it('rejects a method and path defined twice', () => {
    const routes = [route('GET', '/user', 'users/a'), route('GET', '/user', 'users/b')];
    expect(() => assertDeployableRoutes(routes)).toThrow(/GET \/user is defined twice/);
  });

  it('rejects handlers whose function ids collide', () => {
    const routes = [route('GET', '/a', 'users/get-by'), route('GET', '/b', 'users-get/by')];
    expect(() => assertDeployableRoutes(routes)).toThrow(/both map to function id UsersGetBy/);
  });
});
