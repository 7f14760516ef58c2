/**
 * The service as it deploys, on this machine. Every Lambda function runs its deployed code under
 * `aws-lambda-ric` on Node.js 22 behind a Runtime API stand-in, as Lambda's user (`sbx_user1051`,
 * 993:990), with a read-only root, its `/tmp` and the environment the synthesized template gives
 * it (`#local/lambda-functions`):
 * - the import workflow's image functions: the worker image's own root file system
 *   (`#local/image-root`), the bundles its build stage makes at `/var/task`, the function's
 *   command, and the shared file system at its mount path;
 * - the zip functions (every API route, the workflow's zip steps): their bundles from `cdk synth`'s
 *   cloud assembly at `/var/task`, with `node` alone on PATH.
 * The Git front end runs from the same image as its task definition says: its user, entry point,
 * command, environment and health check, in its own PID namespace under the init
 * `initProcessEnabled` injects. The file system's access point shows every file as its POSIX user's
 * and creates every file for it. The rest is the ordinary local stack: DynamoDB Local, the Step
 * Functions endpoint running the real ASL file, the local API Gateway.
 *
 * What it replaces, because no AWS is here: the table name and URLs (the local ones), KMS (the
 * local key file), the LFS bucket (objects stay in the hosted repository), the credentials (static
 * ones in the environment), the front end's port (a free one, also in its health check), and the
 * managed Node.js runtime's root (zip functions run on the image's Debian root, with only `node`
 * on PATH, as the managed runtime has no git).
 */
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { bundleWorkerHandlers } from '#cdk/worker/bundle';
import { WEBHOOK_DELIVERY } from '#cdk/workflow-tasks';
import type { Handler } from '#local/http-server';
import { type ImageRoot, workerImageRoot } from '#local/image-root';
import { type Sandbox, type SandboxOptions, startSandbox } from '#local/image-sandbox';
import { importStateMachine } from '#local/import-workflow';
import type { FaultPlan } from '#local/lambda-faults';
import { type LambdaFunction, lambdaFunction } from '#local/lambda-functions';
import { freePort } from '#local/ports';
import { ensureSecretsKey, type LocalStack, startLocalStack } from '#local/stack';
import type { LocalTask } from '#local/step-functions';
import type { SyncTimerOptions } from '#local/sync-timer';
import { ENV } from '#shared/config';
import { ROUTES } from '#shared/routes';
import { type CfnResource, type Deployment, loadDeployment } from './deployment.ts';

const run = promisify(execFile);

/** Lambda's default user in an execution environment (`sbx_user1051`). */
export const LAMBDA_USER = { uid: 993, gid: 990 } as const;
const STACK_NAME = 'OAuthImportService';
const REGION = 'us-east-1';
const SECRETS_KEY_PATH = '/run/secrets/secrets.key';
/**
 * What the managed Node.js runtime sets that matters here; its PATH is the image root's `node`
 * alone, as the managed runtime has none of the tools in the image's `/usr/bin`.
 */
const ZIP_RUNTIME_ENVIRONMENT = {
  PATH: '/usr/local/bin',
  LAMBDA_TASK_ROOT: '/var/task',
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
  LANG: 'en_US.UTF-8',
};

export interface AsDeployedOptions {
  /** Environment values on top of the template's, for every function (small test limits). */
  readonly overrides?: Readonly<Record<string, string>>;
  /**
   * The scheduler's ticks (default: the rule's rate) and clock (the event's `time`); each tick
   * invokes the function the template's rule targets.
   */
  readonly syncScheduler?: Pick<SyncTimerOptions, 'tickMs' | 'clock'>;
  /**
   * Execution environments to kill on demand (`#local/lambda-faults`): the workflow's tasks by
   * name, the webhook delivery function as `DeliverWebhook`; none without it.
   */
  readonly faults?: FaultPlan;
  /** Waits before the retries of a failed webhook delivery (Lambda's: about one and two minutes). */
  readonly webhookRetryDelaysMs?: readonly number[];
  /** Memory sizes (MiB) instead of the template's `MemorySize`, by workflow task (`ImportRawHistory`). */
  readonly memoryMiB?: Readonly<Record<string, number>>;
}

export interface AsDeployed {
  readonly stack: LocalStack & { readonly endpointsFile: string };
  /** The file system's files as the server stores them (created for the access point's user). */
  readonly fileSystem: string;
  /** The access point's POSIX user, from the template. */
  readonly accessPointUser: { readonly uid: number; readonly gid: number };
  readonly image: ImageRoot;
  readonly frontEnd: { readonly sandbox: Sandbox; readonly url: string; readonly logFile: string };
  /**
   * ECS replacing the front end's task: the task is killed (its whole PID namespace, at once) and a
   * new one starts on the same file system, behind the same address; `frontEnd` is then the new one.
   */
  replaceFrontEnd(): Promise<void>;
  /** The `/tmp` of each running environment of a workflow task (`Detect`), for a test to fill. */
  tmpDirs(task: string): Promise<string[]>;
  /** Every function environment's output, for a failing test to show. */
  logs(): Promise<string>;
  stop(): Promise<void>;
}

/** The template's value of a variable as this machine has it; undefined drops the variable. */
const LOCAL_VALUES: Readonly<Record<string, () => string | undefined>> = {
  [ENV.tableName]: () => process.env[ENV.tableName],
  [ENV.baseUrl]: () => process.env[ENV.baseUrl],
  [ENV.authUrl]: () => process.env[ENV.authUrl],
  [ENV.settingsUrl]: () => process.env[ENV.settingsUrl],
  [ENV.importUrl]: () => process.env[ENV.importUrl],
  [ENV.importStateMachineArn]: () => process.env[ENV.importStateMachineArn],
  [ENV.secretsKmsKeyId]: () => undefined,
  [ENV.lfsBucket]: () => undefined,
  // The delivery function by name: the local stand-in of Lambda's asynchronous invocation runs it.
  [ENV.webhookDeliveryFunction]: () => process.env[ENV.webhookDeliveryFunction],
  AWS_REGION: () => REGION,
};

/** What only this machine needs: its endpoints, the loopback origins, the local sealing key. */
const localOnly = (): Record<string, string> => ({
  [ENV.dynamodbEndpoint]: process.env[ENV.dynamodbEndpoint] ?? '',
  [ENV.stepFunctionsEndpoint]: process.env[ENV.stepFunctionsEndpoint] ?? '',
  [ENV.eventsEndpoint]: process.env[ENV.eventsEndpoint] ?? '',
  [ENV.lambdaEndpoint]: process.env[ENV.lambdaEndpoint] ?? '',
  [ENV.originAllowedAddresses]: '127.0.0.1,::1',
  [ENV.secretsKeyFile]: SECRETS_KEY_PATH,
  [ENV.logLevel]: 'info',
  AWS_ACCESS_KEY_ID: 'ASIALOCALSTANDIN',
  AWS_SECRET_ACCESS_KEY: 'local-stand-in-secret',
  AWS_SESSION_TOKEN: 'local-stand-in-session',
});

/** A resource's variables with every token given its local value; a token without one is an error. */
function localEnvironment(
  where: string,
  variables: Readonly<Record<string, unknown>> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    const local = LOCAL_VALUES[name];
    if (local) {
      const resolved = local();
      if (resolved !== undefined) env[name] = resolved;
    } else if (typeof value === 'string') {
      env[name] = value;
    } else {
      throw new Error(
        `${where}: ${name} is ${JSON.stringify(value)} in the template, and has no local value`,
      );
    }
  }
  return env;
}

/** What Lambda adds to a function's environment besides what `lambdaFunction` sets from its config. */
const lambdaVariables = (handler: string) => ({
  AWS_REGION: REGION,
  AWS_DEFAULT_REGION: REGION,
  _HANDLER: handler,
  TZ: ':UTC',
});

async function mountAccessPoint(source: string, target: string, owner: { uid: number; gid: number }) {
  // Every file shows as the access point's user and is created for it, whoever writes it; the
  // modes let any user through, as the access point does by acting as its user for everyone.
  await run('bindfs', [
    `--force-user=${owner.uid}`,
    `--force-group=${owner.gid}`,
    `--create-for-user=${owner.uid}`,
    `--create-for-group=${owner.gid}`,
    '--perms=a+rwX',
    source,
    target,
  ]);
}

export async function startAsDeployed(options: AsDeployedOptions = {}): Promise<AsDeployed> {
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const fn of stops.reverse()) await fn().catch(() => undefined);
  };
  try {
    const image = await workerImageRoot();
    const cdkOut = inject('cdkOut');
    const deployment = loadDeployment(cdkOut, STACK_NAME);

    const work = await mkdtemp(join(tmpdir(), 'as-deployed-'));
    stops.push(() => rm(work, { recursive: true, force: true }));
    const workerBundles = join(work, 'task');
    const fileSystem = join(work, 'efs');
    const mounted = join(work, 'efs-mount');
    const logDir = join(work, 'logs');
    for (const dir of [workerBundles, fileSystem, mounted, logDir]) await mkdir(dir, { recursive: true });
    await chmod(work, 0o755);
    await bundleWorkerHandlers(workerBundles);
    // Lambda's user reads the code; the cloud assembly's files are only their owner's otherwise.
    await run('chmod', ['-R', 'a+rX', workerBundles, cdkOut]);

    const [accessPoint] = deployment.ofType('AWS::EFS::AccessPoint');
    if (!accessPoint) throw new Error('the template has no access point');
    const posix = accessPoint[1].Properties.PosixUser as { Uid: string; Gid: string };
    const accessPointUser = { uid: Number(posix.Uid), gid: Number(posix.Gid) };
    await run('chown', [`${accessPointUser.uid}:${accessPointUser.gid}`, fileSystem]);
    await mountAccessPoint(fileSystem, mounted, accessPointUser);
    stops.push(() => run('umount', [mounted]));

    // The local sealing key stands in for what AWS gives by role (KMS; the LFS bucket's presigning),
    // so the identities the functions and the front end run as must read it: a copy they may read.
    const secretsKey = join(work, 'secrets.key');
    await copyFile(await ensureSecretsKey(), secretsKey);
    await chmod(secretsKey, 0o444);
    const files = () => ({ [SECRETS_KEY_PATH]: secretsKey });
    // The managed runtime's user database knows Lambda's user (its home is /home/sbx_user1051);
    // the image's does not, which is why the image sets HOME.
    const managedPasswd = join(work, 'passwd');
    await writeFile(
      managedPasswd,
      `${await readFile(join(image.root, 'etc/passwd'), 'utf8')}sbx_user1051:x:${LAMBDA_USER.uid}:${LAMBDA_USER.gid}::/home/sbx_user1051:/sbin/nologin\n`,
      { mode: 0o644 },
    );
    const started: LambdaFunction[] = [];
    const byTask = new Map<string, LambdaFunction>();
    stops.push(() => Promise.all(started.map((fn) => fn.stop())));

    /** A function of the template, started at its first invocation (the stack's endpoints are known then). */
    const deployedFunction = (id: string, resource: CfnResource, task?: string) => {
      const properties = resource.Properties;
      const name = `${STACK_NAME}-${id
        .split('/')
        .pop()
        ?.replace(/[0-9A-F]{8}$/, '')}`;
      const isImage = properties.PackageType === 'Image';
      const handler = isImage
        ? ((properties.ImageConfig.Command as string[])[0] ?? '')
        : String(properties.Handler);
      const sandbox: Omit<SandboxOptions, 'env' | 'argv' | 'logFile'> = isImage
        ? {
            root: image.root,
            workdir: image.workdir,
            taskDir: workerBundles,
            fileSystem: { source: mounted, mountPath: properties.FileSystemConfigs[0].LocalMountPath },
            files: files(),
            ...LAMBDA_USER,
            tmpMiB: Number(properties.EphemeralStorage?.Size ?? 512),
          }
        : {
            root: image.root,
            workdir: ZIP_RUNTIME_ENVIRONMENT.LAMBDA_TASK_ROOT,
            taskDir: join(cdkOut, String(resource.Metadata?.['aws:asset:path'])),
            files: files(),
            ...LAMBDA_USER,
            tmpMiB: Number(properties.EphemeralStorage?.Size ?? 512),
          };
      let fn: LambdaFunction | undefined;
      return (event: unknown) => {
        fn ??= lambdaFunction({
          name,
          argv: [...image.entrypoint, handler],
          timeoutSeconds: Number(properties.Timeout ?? 3),
          memoryMiB: (task && options.memoryMiB?.[task]) || Number(properties.MemorySize ?? 128),
          env: {
            ...(isImage ? image.env : ZIP_RUNTIME_ENVIRONMENT),
            ...localEnvironment(id, properties.Environment?.Variables),
            ...localOnly(),
            ...options.overrides,
            ...lambdaVariables(handler),
          },
          sandbox: { ...sandbox, files: isImage ? files() : { ...files(), '/etc/passwd': managedPasswd } },
          logDir,
          ...(options.faults && task
            ? { faults: (event: unknown) => options.faults?.forInvocation(task, event) }
            : {}),
        });
        if (!started.includes(fn)) started.push(fn);
        if (task) byTask.set(task, fn);
        return fn.invoke(event);
      };
    };

    const tasks: Record<string, LocalTask> = {};
    for (const [placeholder, id] of workflowFunctions(deployment)) {
      const task = placeholder.replace(/FunctionArn$/, '');
      tasks[placeholder] = deployedFunction(id, deployment.resources[id] as CfnResource, task);
    }
    const handlers: Record<string, Handler> = {};
    const byDescription = new Map(
      deployment
        .ofType('AWS::Lambda::Function')
        .map(([id, resource]) => [String(resource.Properties.Description), [id, resource] as const]),
    );
    for (const route of ROUTES) {
      const found = byDescription.get(`${route.method} ${route.path}`);
      if (!found) continue;
      const invoke = deployedFunction(...found);
      handlers[route.handler] = (event) => invoke(event) as ReturnType<Handler>;
    }

    // Lambda's asynchronous invocation of the delivery function runs its bundle as Lambda would.
    const webhook = byDescription.get(WEBHOOK_DELIVERY.description);
    if (!webhook) throw new Error('the template has no webhook delivery function');
    const deliverWebhook = deployedFunction(...webhook, 'DeliverWebhook');

    const scheduler = scheduledFunction(deployment);
    const invokeScheduler = deployedFunction(scheduler.functionId, scheduler.function);

    let frontEnd: AsDeployed['frontEnd'] | undefined;
    const frontEndPlace = (port?: number) => ({
      taskDir: workerBundles,
      mounted,
      files: files(),
      logDir,
      port,
    });
    const port = await freePort();
    const endpointsFile = join(work, 'local.json');
    process.env.LOCAL_ENDPOINTS_FILE = endpointsFile;
    process.env[ENV.logLevel] ??= 'silent';
    const stack = await startLocalStack({
      port,
      dynamodbEndpoint: inject('dynamodbEndpoint'),
      tableName: `test-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      writeEndpointsFile: true,
      importStateMachine: await importStateMachine(tasks),
      handlers,
      webhookDelivery: deliverWebhook,
      ...(options.webhookRetryDelaysMs ? { webhookRetryDelaysMs: options.webhookRetryDelaysMs } : {}),
      syncScheduler: {
        tickMs: scheduler.rateMs,
        ruleArn: `arn:aws:events:${REGION}:123456789012:rule/${STACK_NAME}-${scheduler.ruleId}`,
        ...options.syncScheduler,
        invoke: invokeScheduler,
      },
      gitFrontend: async () => {
        // The handlers' URLs are the web origin's, known now that its port is chosen.
        for (const name of [ENV.authUrl, ENV.settingsUrl, ENV.importUrl]) {
          process.env[name] = `http://127.0.0.1:${port}`;
        }
        process.env[ENV.baseUrl] = `http://127.0.0.1:${port}/api/v3`;
        frontEnd = await startFrontEnd(deployment, image, frontEndPlace());
        return { url: frontEnd.url, stop: () => (frontEnd ? frontEnd.sandbox.stop() : Promise.resolve()) };
      },
    });
    stops.push(() => stack.stop());
    if (!frontEnd) throw new Error('the Git front end did not start');
    return {
      stack: { ...stack, endpointsFile },
      fileSystem,
      accessPointUser,
      image,
      get frontEnd() {
        if (!frontEnd) throw new Error('the Git front end did not start');
        return frontEnd;
      },
      async replaceFrontEnd() {
        if (!frontEnd) throw new Error('the Git front end did not start');
        const port = Number(new URL(frontEnd.url).port);
        await frontEnd.sandbox.stop();
        frontEnd = await startFrontEnd(deployment, image, frontEndPlace(port));
      },
      tmpDirs: async (task) => (await byTask.get(task)?.tmpDirs()) ?? [],
      async logs() {
        const names = (await readdir(logDir)).sort();
        const texts = await Promise.all(
          names.map(
            async (file) => `--- ${file}\n${(await readFile(join(logDir, file), 'utf8')).slice(-4000)}`,
          ),
        );
        return texts.join('\n');
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The functions the state machine's placeholders name: placeholder and logical id. */
function workflowFunctions(deployment: Deployment): [string, string][] {
  const [machine] = deployment.ofType('AWS::StepFunctions::StateMachine');
  if (!machine) throw new Error('the template has no state machine');
  const substitutions = machine[1].Properties.DefinitionSubstitutions as Record<
    string,
    { 'Fn::GetAtt': [string, string] }
  >;
  return Object.entries(substitutions).map(([placeholder, value]) => [placeholder, value['Fn::GetAtt'][0]]);
}

/** The one scheduled rule, its rate, and the function it targets (the sync scheduler). */
function scheduledFunction(deployment: Deployment) {
  const rules = deployment
    .ofType('AWS::Events::Rule')
    .filter(([, rule]) => rule.Properties.ScheduleExpression !== undefined);
  const [only, ...more] = rules;
  if (!only || more.length > 0) throw new Error(`the template has ${rules.length} scheduled rules, not one`);
  const [ruleId, rule] = only;
  const expression = String(rule.Properties.ScheduleExpression);
  const rate = expression.match(/^rate\((\d+) (minute|hour|day)s?\)$/);
  if (!rate || rule.Properties.State !== 'ENABLED')
    throw new Error(`${ruleId}: ${expression}, not an enabled rate`);
  const unitMs = { minute: 60_000, hour: 3_600_000, day: 86_400_000 }[rate[2] as 'minute' | 'hour' | 'day'];
  const targets = rule.Properties.Targets as { Arn: { 'Fn::GetAtt'?: [string, string] } }[];
  const functionId = targets.length === 1 ? targets[0]?.Arn['Fn::GetAtt']?.[0] : undefined;
  const fn = functionId === undefined ? undefined : deployment.resources[functionId];
  if (!functionId || fn?.Type !== 'AWS::Lambda::Function') {
    throw new Error(`${ruleId}: its target is not one function of the template`);
  }
  return { ruleId, rateMs: Number(rate[1]) * unitMs, functionId, function: fn };
}

/** What the front end's start reads of its container definition (CloudFormation's names). */
interface ContainerDefinition {
  readonly User: string;
  readonly EntryPoint: string[];
  readonly Command: string[];
  readonly Environment: { Name: string; Value: unknown }[];
  readonly MountPoints: { ContainerPath: string }[];
  readonly HealthCheck: { Command: string[] };
  readonly LinuxParameters?: { InitProcessEnabled?: boolean };
}

/** The task's container; its `PORT` (8080 in the template) moves to a free one here, health check too. */
async function startFrontEnd(
  deployment: Deployment,
  image: ImageRoot,
  where: { taskDir: string; mounted: string; files: Record<string, string>; logDir: string; port?: number },
): Promise<AsDeployed['frontEnd']> {
  const [task] = deployment.ofType('AWS::ECS::TaskDefinition');
  if (!task) throw new Error('the template has no task definition');
  const container = (task[1].Properties.ContainerDefinitions as ContainerDefinition[])[0];
  if (!container) throw new Error('the task definition has no container');
  const [uid, gid] = container.User.split(':').map(Number) as [number, number];
  const port = where.port ?? (await freePort());
  const variables = Object.fromEntries(container.Environment.map(({ Name, Value }) => [Name, Value]));
  const env = {
    ...image.env,
    ...localEnvironment(task[0], variables),
    ...localOnly(),
    PORT: String(port),
    AWS_DEFAULT_REGION: REGION,
    AWS_EXECUTION_ENV: 'AWS_ECS_FARGATE',
  };
  const init = container.LinuxParameters?.InitProcessEnabled === true ? await tiniPath() : undefined;
  const common = {
    root: image.root,
    workdir: image.workdir,
    taskDir: where.taskDir,
    fileSystem: { source: where.mounted, mountPath: container.MountPoints[0]?.ContainerPath ?? '/mnt/data' },
    files: where.files,
    uid,
    gid,
    tmpMiB: 512,
    env,
    ...(init ? { init } : {}),
  };
  const logFile = join(where.logDir, 'git-frontend.log');
  const sandbox = await startSandbox({
    ...common,
    argv: [...container.EntryPoint, ...container.Command],
    logFile,
  });
  const url = `http://127.0.0.1:${port}`;
  // The task definition's own health check, run in the container's image as ECS runs it.
  const check = container.HealthCheck.Command.slice(1).map((part) => part.replaceAll('8080', String(port)));
  for (let attempt = 0; ; attempt++) {
    if (sandbox.process.exitCode !== null)
      throw new Error(`the Git front end exited: ${await readFile(logFile, 'utf8')}`);
    const probe = await startSandbox({
      ...common,
      argv: check,
      logFile: join(where.logDir, 'health-check.log'),
    });
    if ((await probe.exited) === 0) break;
    if (attempt > 60)
      throw new Error(`the Git front end's health check never passed: ${await readFile(logFile, 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { sandbox, url, logFile };
}

/** The init ECS injects (`docker-init` is tini); the static build needs nothing of the image. */
async function tiniPath(): Promise<string> {
  for (const candidate of ['/usr/bin/tini-static', '/usr/bin/tini']) {
    if (
      await run('test', ['-x', candidate]).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  throw new Error('tini is not installed (scripts/setup.sh installs it)');
}
