import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WEBHOOK_DELIVERY } from '#cdk/workflow-tasks';
import { startGitServer } from '#git-server/server';
import { ENV } from '#shared/config';
import { ROUTES } from '#shared/routes';
import { createTable } from './create-table.ts';
import { localDynamoDbClient, startDynamoDbLocal } from './dynamodb-local.ts';
import { startLocalEventBus } from './event-bus.ts';
import { API_GATEWAY_LIMITS, type GatewayLimits, type Handler, startHttpServer } from './http-server.ts';
import { importStateMachine } from './import-workflow.ts';
import { type DeadLetter, type EventHandler, startLambdaEvents } from './lambda-events.ts';
import { type LocalStateMachine, startStepFunctionsLocal } from './step-functions.ts';
import { type SyncTimerOptions, startSyncTimer } from './sync-timer.ts';

/** The webhook delivery function's name here (in AWS: the function CDK names). */
export const LOCAL_WEBHOOK_FUNCTION = WEBHOOK_DELIVERY.name;
const WEBHOOK_HANDLER = new URL(`../../functions/workflow/${WEBHOOK_DELIVERY.handler}.ts`, import.meta.url);

/** Where `npm start` keeps DynamoDB Local's files and the endpoints file the admin CLI reads. */
export const DATA_DIR = fileURLToPath(new URL('../../.data/', import.meta.url));
/** `LOCAL_ENDPOINTS_FILE` moves it (tests use their own, so they never clobber a running stack's). */
export const endpointsFile = (): string => process.env.LOCAL_ENDPOINTS_FILE ?? `${DATA_DIR}local.json`;
export const LOCAL_TABLE_NAME = 'oauth-import-service';

/** What `.data/local.json` holds: how to reach the running local stack. */
export interface LocalEndpoints {
  readonly tableName: string;
  readonly dynamodbEndpoint: string;
  readonly stepFunctionsEndpoint: string;
  /** The EventBridge stand-in (PutEvents) and the JSON-lines file it records events in. */
  readonly eventsEndpoint: string;
  readonly eventsFile: string;
  readonly baseUrl: string;
  readonly webUrl: string;
  /** The 32-byte key that seals stored secrets (TOTP seeds) locally, where AWS uses KMS. */
  readonly secretsKeyFile: string;
}

/**
 * The local sealing key, next to the endpoints file (`.data/secrets.key` for `npm start`): made
 * once with 32 random bytes, readable by its owner only, reused after that so that sealed values
 * in a persistent table keep opening.
 */
export async function ensureSecretsKey(): Promise<string> {
  const file = join(dirname(endpointsFile()), 'secrets.key');
  const existing = await readFile(file).catch(() => undefined);
  if (existing?.length === 32) return file;
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, randomBytes(32), { mode: 0o600 });
  return file;
}

export interface LocalStackOptions {
  /** HTTP port on 127.0.0.1; 0 picks a free one. */
  readonly port: number;
  /** Use this running DynamoDB (tests share one per run); otherwise start DynamoDB Local. */
  readonly dynamodbEndpoint?: string;
  /** For a DynamoDB Local we start: keep data under `.data/` (else in memory). */
  readonly persistent?: boolean;
  readonly tableName?: string;
  /** Write `.data/local.json` for the admin CLI. */
  readonly writeEndpointsFile?: boolean;
  /**
   * The import workflow the API starts (`IMPORT_STATE_MACHINE_ARN`): by default the real one
   * (`statemachines/import.asl.json` with the task handlers in this process); tests of the API
   * alone may pass a fixture.
   */
  readonly importStateMachine?: LocalStateMachine;
  /**
   * API Gateway's limits, AWS's by default (29 s integration timeout, 10 MB requests, 6 MB Lambda
   * payloads); a test may lower one to reach it with little data or time.
   */
  readonly gatewayLimits?: Partial<GatewayLimits>;
  /**
   * Starts the Git front end once the handlers' configuration is in the environment; by default
   * the server runs in this process (the as-deployed tests start the worker image's own).
   */
  readonly gitFrontend?: () => Promise<{ readonly url: string; stop(): Promise<void> }>;
  /** Route handlers by handler id, instead of the modules in this process (the deployed bundles). */
  readonly handlers?: Readonly<Record<string, Handler>>;
  /** The sync scheduler's timer (AWS: an EventBridge rule, once a minute); see `sync-timer.ts`. */
  readonly syncScheduler?: SyncTimerOptions;
  /** Waits before the retries of a failed webhook delivery (Lambda's: about one and two minutes). */
  readonly webhookRetryDelaysMs?: readonly number[];
  /** The webhook delivery function, instead of its module in this process (the deployed bundle). */
  readonly webhookDelivery?: EventHandler;
}

export interface LocalStack extends LocalEndpoints {
  /** The Git front end's own address (the web URL forwards Git paths to it). */
  readonly gitFrontendUrl: string;
  /** Webhook delivery jobs that failed every attempt (AWS: the dead-letter queue). */
  readonly webhookDeadLetters: readonly DeadLetter[];
  stop(): Promise<void>;
}

/**
 * The whole service on this machine: DynamoDB Local, the Step Functions endpoint, the HTTP
 * server running the real handlers and the Git front end behind it. Configuration reaches the handlers through the same
 * environment variables the CDK construct sets in AWS.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const fn of stops.reverse()) await fn().catch(() => undefined);
  };
  try {
    let dynamodbEndpoint = options.dynamodbEndpoint;
    if (!dynamodbEndpoint) {
      const dynamodb = await startDynamoDbLocal(options.persistent ? { dataDir: `${DATA_DIR}dynamodb` } : {});
      stops.push(() => dynamodb.stop());
      dynamodbEndpoint = dynamodb.endpoint;
    }
    // Import work folders, hosted repositories and recorded events live beside the endpoints file
    // (`.data/` for `npm start`) while the table that names them lasts. An in-memory run keeps
    // nothing between runs: its own folder, removed when it stops (the next run's table would
    // otherwise find a stale import's folders under the same owner, name and attempt).
    const keepsTable = options.persistent === true || options.dynamodbEndpoint !== undefined;
    const stateDir = keepsTable ? dirname(endpointsFile()) : await mkdtemp(join(tmpdir(), 'local-stack-'));
    if (!keepsTable) stops.unshift(() => rm(stateDir, { recursive: true, force: true }));
    const tableName = options.tableName ?? LOCAL_TABLE_NAME;
    await createTable(localDynamoDbClient(dynamodbEndpoint), tableName);

    const importMachine = options.importStateMachine ?? (await importStateMachine());
    const stepFunctions = await startStepFunctionsLocal({ machines: [importMachine] });
    stops.push(() => stepFunctions.stop());
    process.env[ENV.importStateMachineArn] = stepFunctions.stateMachineArn(importMachine.name);
    // Origins the local tests serve on the loopback interface; nothing else private is reachable.
    process.env[ENV.originAllowedAddresses] = '127.0.0.1,::1';

    process.env[ENV.tableName] = tableName;
    process.env[ENV.dynamodbEndpoint] = dynamodbEndpoint;
    process.env[ENV.stepFunctionsEndpoint] = stepFunctions.endpoint;
    // The default event bus: import events recorded in `events.jsonl`.
    const events = await startLocalEventBus({ file: join(stateDir, 'events.jsonl') });
    stops.push(() => events.stop());
    process.env[ENV.eventsEndpoint] = events.endpoint;
    // Webhook deliveries leave requests through the asynchronous invocation of their function.
    const lambdaEvents = await startLambdaEvents({
      functions: {
        [LOCAL_WEBHOOK_FUNCTION]: async () =>
          options.webhookDelivery ??
          ((await import(WEBHOOK_HANDLER.href)) as { handler: EventHandler }).handler,
      },
      retries: WEBHOOK_DELIVERY.retries,
      ...(options.webhookRetryDelaysMs ? { retryDelaysMs: options.webhookRetryDelaysMs } : {}),
    });
    stops.push(() => lambdaEvents.stop());
    process.env[ENV.lambdaEndpoint] = lambdaEvents.endpoint;
    process.env[ENV.webhookDeliveryFunction] = LOCAL_WEBHOOK_FUNCTION;
    const secretsKeyFile = await ensureSecretsKey();
    process.env[ENV.secretsKeyFile] = secretsKeyFile;
    process.env[ENV.repositoriesDir] = join(stateDir, 'repositories');
    process.env[ENV.importWorkDir] = join(stateDir, 'imports');
    // The Git front end runs beside API Gateway as in AWS, from the same code as its container.
    const gitFrontend = await (options.gitFrontend?.() ?? startGitServer({ port: 0, host: '127.0.0.1' }));
    stops.push(() => gitFrontend.stop());
    const http = await startHttpServer({
      routes: ROUTES,
      port: options.port,
      limits: { ...API_GATEWAY_LIMITS, ...options.gatewayLimits },
      gitFrontend: gitFrontend.url,
      ...(options.handlers ? { handlers: options.handlers } : {}),
    });
    stops.push(() => http.stop());
    // Known only now that the port is bound; the handlers read config lazily on first request.
    process.env[ENV.baseUrl] = `${http.url}/api/v3`;
    for (const name of [ENV.authUrl, ENV.settingsUrl, ENV.importUrl]) process.env[name] = http.url;
    // Scheduled syncs, started by the same handler the EventBridge rule invokes in AWS.
    const syncTimer = startSyncTimer(options.syncScheduler);
    stops.push(() => syncTimer.stop());

    const endpoints: LocalEndpoints = {
      tableName,
      dynamodbEndpoint,
      stepFunctionsEndpoint: stepFunctions.endpoint,
      eventsEndpoint: events.endpoint,
      eventsFile: events.file,
      baseUrl: `${http.url}/api/v3`,
      webUrl: http.url,
      secretsKeyFile,
    };
    if (options.writeEndpointsFile) {
      const file = endpointsFile();
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, `${JSON.stringify(endpoints, null, 2)}\n`);
    }
    return {
      ...endpoints,
      gitFrontendUrl: gitFrontend.url,
      webhookDeadLetters: lambdaEvents.deadLetters,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
