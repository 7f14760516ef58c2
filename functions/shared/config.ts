import { MAX_REQUEST_BODY_BYTES } from './body-limit.ts';
import { DEFAULT_DOCS_URL } from './errors.ts';

/** Files larger than this are large files (spec §8: 100 MB; GitHub's limit is 100 MiB). */
export const DEFAULT_LARGE_FILE_BYTES = 100 * 1024 * 1024;

/** Largest working directory of one import attempt (the raw history): 10 GiB. */
export const DEFAULT_IMPORT_MAX_BYTES = 10 * 1024 * 1024 * 1024;
/** Imports of one batch that run at once (`domain/import-batches.ts` says why 4). */
export const DEFAULT_BATCH_CONCURRENCY = 4;

/** Most Git objects one import may hold (the Linux kernel's history has about 11 million). */
export const DEFAULT_IMPORT_MAX_OBJECTS = 30_000_000;

/**
 * The Git front end's limits (see docs/decisions.md, "Git front end limits"): the largest push
 * (GitHub refuses pushes over 2 GB), git processes at once per task and per caller or address, and
 * how a request body must keep arriving (Apache's `mod_reqtimeout` default, `body=20,MinRate=500`).
 */
export const DEFAULT_GIT_MAX_PUSH_BYTES = 2 * 1024 * 1024 * 1024;
export const DEFAULT_GIT_MAX_PROCESSES = 24;
export const DEFAULT_GIT_MAX_PROCESSES_PER_CLIENT = 6;
export const DEFAULT_GIT_BODY_TIMEOUT_SECONDS = 20;
export const DEFAULT_GIT_BODY_MIN_BYTES_PER_SECOND = 500;
export const DEFAULT_GIT_REQUEST_TIMEOUT_SECONDS = 3600;

/** GitHub's lifetimes for expiring user tokens: 8 hours, and 6 months for their refresh tokens. */
export const DEFAULT_USER_TOKEN_SECONDS = 28_800;
export const DEFAULT_REFRESH_TOKEN_SECONDS = 15_897_600;

/**
 * How long an LFS batch action stays valid: its `RemoteAuth` token on the local store, its
 * presigned URL on S3. GitHub's LFS actions last an hour too.
 */
export const DEFAULT_LFS_ACTION_SECONDS = 3600;
/** SigV4's longest presigned URL (7 days); a presigned LFS action cannot outlive it. */
const MAX_LFS_ACTION_SECONDS = 604_800;

/**
 * Runtime configuration, read and checked once at cold start. The environment variable names are
 * exported so that the CDK construct that sets them and the local stack use the same constants.
 */
export const ENV = {
  tableName: 'TABLE_NAME',
  /** Only set locally: DynamoDB Local's endpoint. */
  dynamodbEndpoint: 'DYNAMODB_ENDPOINT',
  /** Only set locally: the Step Functions endpoint in front of aws-local-stepfunctions. */
  stepFunctionsEndpoint: 'STEPFUNCTIONS_ENDPOINT',
  /** Only set locally: the EventBridge endpoint that records import events (`lib/local/event-bus.ts`). */
  eventsEndpoint: 'EVENTS_ENDPOINT',
  importStateMachineArn: 'IMPORT_STATE_MACHINE_ARN',
  baseUrl: 'API_URL',
  authUrl: 'AUTH_URL',
  settingsUrl: 'SETTINGS_URL',
  importUrl: 'IMPORT_URL',
  vendor: 'VENDOR_NAME',
  docsUrl: 'DOCS_URL',
  maxBodyBytes: 'MAX_BODY_BYTES',
  /** `debug`, `info` (the default), `warn`, `error` or `silent` (the local tests). */
  logLevel: 'LOG_LEVEL',
  /** In AWS: the KMS key that seals stored secrets (TOTP seeds). */
  secretsKmsKeyId: 'SECRETS_KMS_KEY_ID',
  /** Only set locally: a file holding the 32-byte key that seals stored secrets. */
  secretsKeyFile: 'SECRETS_KEY_FILE',
  /** Where import working copies live (EFS in AWS, `.data/imports` locally); they persist across chunks. */
  importWorkDir: 'IMPORT_WORK_DIR',
  /** Where the hosted bare repositories live (EFS in AWS, `.data/repositories` locally). */
  repositoriesDir: 'REPOSITORIES_DIR',
  /**
   * In AWS: the S3 bucket holding Git LFS objects (the batch API answers with presigned URLs to
   * it). Unset (the local stack, tests): objects live in each hosted repository's `lfs/objects`.
   */
  lfsBucket: 'LFS_BUCKET',
  /** Lifetime of an LFS batch action in seconds (default 3600; tests use a short one to see expiry). */
  lfsActionSeconds: 'LFS_ACTION_SECONDS',
  /**
   * Files larger than this many bytes are large files (default 100 MiB, GitHub's file size limit;
   * tests use a small one): an import reports them, and a push that adds one is refused.
   */
  largeFileBytes: 'LARGE_FILE_BYTES',
  /** The largest pack a push may send (git's `receive.maxInputSize`); default 2 GiB. */
  gitMaxPushBytes: 'GIT_MAX_PUSH_BYTES',
  /** Smart-HTTP requests (each one git process tree) a front-end task serves at once; default 24. */
  gitMaxProcesses: 'GIT_MAX_PROCESSES',
  /** Of those, how many one user, app or (anonymous) client address may hold; default 6. */
  gitMaxProcessesPerClient: 'GIT_MAX_PROCESSES_PER_CLIENT',
  /** Seconds a Git request's body may take to start arriving (default 20), extended as it arrives… */
  gitBodyTimeoutSeconds: 'GIT_BODY_TIMEOUT_SECONDS',
  /** …by one second per this many bytes (default 500): a body slower than that is cut off. */
  gitBodyMinBytesPerSecond: 'GIT_BODY_MIN_BYTES_PER_SECOND',
  /** Longest time to receive a whole Git request, headers and body, in seconds (default 3600). */
  gitRequestTimeoutSeconds: 'GIT_REQUEST_TIMEOUT_SECONDS',
  /** The time budget of one chunk of a long import step, in seconds (default 600). */
  importChunkSeconds: 'IMPORT_CHUNK_SECONDS',
  /**
   * Chunk and push rounds one import execution runs before it continues in a new execution
   * (default 1,000: about 7,000 of Step Functions' 25,000 history events; `import-rounds.ts`).
   */
  importRoundsPerExecution: 'IMPORT_ROUNDS_PER_EXECUTION',
  /** Largest raw history an import may fetch, in bytes (default 10 GiB); more fails the import. */
  importMaxBytes: 'IMPORT_MAX_BYTES',
  /** Most Git objects one import's raw history may hold. */
  importMaxObjects: 'IMPORT_MAX_OBJECTS',
  /** Most imports of one batch that run at once (default 4; a batch may ask for fewer). */
  importBatchConcurrency: 'IMPORT_BATCH_CONCURRENCY',
  /**
   * Comma-separated IP addresses an import may reach although they are private or loopback (the
   * local stack and tests: 127.0.0.1 and ::1). Empty in AWS.
   */
  originAllowedAddresses: 'ORIGIN_ALLOWED_ADDRESSES',
  /**
   * The function that delivers webhooks (`functions/workflow/deliver-webhook.ts`), invoked
   * asynchronously (Lambda's own queue: retries, then the dead-letter queue). Unset: no deliveries.
   */
  webhookDeliveryFunction: 'WEBHOOK_DELIVERY_FUNCTION',
  /** Locally only: the Lambda endpoint stand-in that queues those invocations (`lib/local/lambda-events.ts`). */
  lambdaEndpoint: 'LAMBDA_ENDPOINT',
  /** Lifetime of an expiring user token (apps with "expire user authorization tokens"); default 8 hours. */
  userTokenSeconds: 'USER_TOKEN_SECONDS',
  /** Lifetime of a refresh token; default 15897600 s (about 6 months), GitHub's value. */
  refreshTokenSeconds: 'REFRESH_TOKEN_SECONDS',
  /** How long a device code lives, in seconds (default 900, GitHub's 15 minutes; tests use a short one). */
  deviceCodeTtlSeconds: 'DEVICE_CODE_TTL_SECONDS',
  /**
   * The device flow's minimum polling interval, in seconds (default 5, GitHub's). Only the
   * benchmark lowers it, so that one code can be polled on time at full speed.
   */
  devicePollIntervalSeconds: 'DEVICE_POLL_INTERVAL_SECONDS',
} as const;

/** The Git front end's limits (the `GIT_*` variables of `ENV`). */
export interface GitLimits {
  readonly gitMaxPushBytes: number;
  readonly gitMaxProcesses: number;
  readonly gitMaxProcessesPerClient: number;
  readonly gitBodyTimeoutSeconds: number;
  readonly gitBodyMinBytesPerSecond: number;
  readonly gitRequestTimeoutSeconds: number;
}

export interface Config extends GitLimits {
  readonly tableName: string;
  readonly dynamodbEndpoint: string | undefined;
  readonly stepFunctionsEndpoint: string | undefined;
  /** Unset in AWS: import events go to the account's default event bus. */
  readonly eventsEndpoint: string | undefined;
  readonly importStateMachineArn: string | undefined;
  /** Public URLs; when unset in AWS they are derived per request from the API Gateway domain. */
  readonly baseUrl: string | undefined;
  readonly authUrl: string | undefined;
  readonly settingsUrl: string | undefined;
  readonly importUrl: string | undefined;
  readonly vendor: string;
  readonly docsUrl: string;
  /** Defaults to the bound the edge applies in front of every API function (`MAX_REQUEST_BODY_BYTES`). */
  readonly maxBodyBytes: number;
  readonly secretsKmsKeyId: string | undefined;
  readonly secretsKeyFile: string | undefined;
  readonly importWorkDir: string;
  readonly repositoriesDir: string;
  readonly lfsBucket: string | undefined;
  readonly lfsActionSeconds: number;
  readonly largeFileBytes: number;
  readonly importChunkSeconds: number;
  readonly importRoundsPerExecution: number;
  readonly importMaxBytes: number;
  readonly importMaxObjects: number;
  readonly importBatchConcurrency: number;
  readonly originAllowedAddresses: readonly string[];
  readonly webhookDeliveryFunction: string | undefined;
  readonly lambdaEndpoint: string | undefined;
  readonly userTokenSeconds: number;
  readonly refreshTokenSeconds: number;
  readonly deviceCodeTtlSeconds: number;
  readonly devicePollIntervalSeconds: number;
}

function optionalUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const url = new URL(value); // throws at cold start on a malformed URL, never per request
  return url.toString().replace(/\/$/, '');
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const tableName = env[ENV.tableName];
  if (!tableName) throw new Error(`${ENV.tableName} must be set`);
  const vendor = env[ENV.vendor] || 'github';
  if (!/^[a-z0-9-]+$/.test(vendor))
    throw new Error(`${ENV.vendor} must be lower-case letters, digits or '-'`);
  const maxBodyBytes = Number(env[ENV.maxBodyBytes] || MAX_REQUEST_BODY_BYTES);
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes <= 0)
    throw new Error(`${ENV.maxBodyBytes} must be a positive integer`);
  const largeFileBytes = positiveNumber(env, ENV.largeFileBytes, DEFAULT_LARGE_FILE_BYTES, true);
  const importChunkSeconds = positiveNumber(env, ENV.importChunkSeconds, 600, false);
  const lfsActionSeconds = positiveNumber(env, ENV.lfsActionSeconds, DEFAULT_LFS_ACTION_SECONDS, true);
  if (lfsActionSeconds > MAX_LFS_ACTION_SECONDS)
    throw new Error(`${ENV.lfsActionSeconds} must be at most ${MAX_LFS_ACTION_SECONDS}`);
  return Object.freeze({
    tableName,
    dynamodbEndpoint: env[ENV.dynamodbEndpoint] || undefined,
    stepFunctionsEndpoint: env[ENV.stepFunctionsEndpoint] || undefined,
    eventsEndpoint: env[ENV.eventsEndpoint] || undefined,
    importStateMachineArn: env[ENV.importStateMachineArn] || undefined,
    baseUrl: optionalUrl(env, ENV.baseUrl),
    authUrl: optionalUrl(env, ENV.authUrl),
    settingsUrl: optionalUrl(env, ENV.settingsUrl),
    importUrl: optionalUrl(env, ENV.importUrl),
    vendor,
    docsUrl: (env[ENV.docsUrl] || DEFAULT_DOCS_URL).replace(/\/$/, ''),
    maxBodyBytes,
    secretsKmsKeyId: env[ENV.secretsKmsKeyId] || undefined,
    secretsKeyFile: env[ENV.secretsKeyFile] || undefined,
    importWorkDir: env[ENV.importWorkDir] || '/mnt/data/imports',
    repositoriesDir: env[ENV.repositoriesDir] || '/mnt/data/repositories',
    lfsBucket: env[ENV.lfsBucket] || undefined,
    lfsActionSeconds,
    largeFileBytes,
    ...readGitLimits(env),
    importChunkSeconds,
    importRoundsPerExecution: positiveNumber(env, ENV.importRoundsPerExecution, 1000, true),
    importMaxBytes: positiveNumber(env, ENV.importMaxBytes, DEFAULT_IMPORT_MAX_BYTES, true),
    importMaxObjects: positiveNumber(env, ENV.importMaxObjects, DEFAULT_IMPORT_MAX_OBJECTS, true),
    importBatchConcurrency: positiveNumber(env, ENV.importBatchConcurrency, DEFAULT_BATCH_CONCURRENCY, true),
    deviceCodeTtlSeconds: positiveNumber(env, ENV.deviceCodeTtlSeconds, 900, true),
    devicePollIntervalSeconds: positiveNumber(env, ENV.devicePollIntervalSeconds, 5, false),
    originAllowedAddresses: Object.freeze(
      (env[ENV.originAllowedAddresses] ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
    ),
    webhookDeliveryFunction: env[ENV.webhookDeliveryFunction] || undefined,
    lambdaEndpoint: env[ENV.lambdaEndpoint] || undefined,
    userTokenSeconds: positiveNumber(env, ENV.userTokenSeconds, DEFAULT_USER_TOKEN_SECONDS, true),
    refreshTokenSeconds: positiveNumber(env, ENV.refreshTokenSeconds, DEFAULT_REFRESH_TOKEN_SECONDS, true),
  });
}

/**
 * The Git front end's limits alone: the server reads them when it starts, while the rest of the
 * configuration is read when the first request needs it (the local stack sets public URLs later).
 */
export function readGitLimits(env: NodeJS.ProcessEnv = process.env): GitLimits {
  return {
    gitMaxPushBytes: positiveNumber(env, ENV.gitMaxPushBytes, DEFAULT_GIT_MAX_PUSH_BYTES, true),
    gitMaxProcesses: positiveNumber(env, ENV.gitMaxProcesses, DEFAULT_GIT_MAX_PROCESSES, true),
    gitMaxProcessesPerClient: positiveNumber(
      env,
      ENV.gitMaxProcessesPerClient,
      DEFAULT_GIT_MAX_PROCESSES_PER_CLIENT,
      true,
    ),
    gitBodyTimeoutSeconds: positiveNumber(
      env,
      ENV.gitBodyTimeoutSeconds,
      DEFAULT_GIT_BODY_TIMEOUT_SECONDS,
      false,
    ),
    gitBodyMinBytesPerSecond: positiveNumber(
      env,
      ENV.gitBodyMinBytesPerSecond,
      DEFAULT_GIT_BODY_MIN_BYTES_PER_SECOND,
      false,
    ),
    gitRequestTimeoutSeconds: positiveNumber(
      env,
      ENV.gitRequestTimeoutSeconds,
      DEFAULT_GIT_REQUEST_TIMEOUT_SECONDS,
      false,
    ),
  };
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, integer: boolean): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!(value > 0) || !Number.isFinite(value) || (integer && !Number.isInteger(value)))
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}`);
  return value;
}

let cached: Config | undefined;
/** The process-wide configuration (read lazily once, so importing a module never throws). */
export function config(): Config {
  cached ??= readConfig();
  return cached;
}

/** The vendor's name as GitHub spells its own: `GitHub`. */
export const vendorTitle = (vendor: string): string =>
  vendor === 'github' ? 'GitHub' : vendor.charAt(0).toUpperCase() + vendor.slice(1);

/** A vendor header name as GitHub spells its own: `X-GitHub-OTP`, `X-GitHub-Media-Type`. */
export function vendorHeader(vendor: string, suffix: string): string {
  return `X-${vendorTitle(vendor)}-${suffix}`;
}

const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Observability {
  /** Powertools' `service` key on every log record and the metrics' `service` dimension. */
  readonly serviceName: string;
  readonly metricsNamespace: string;
  readonly logLevel: LogLevel;
  /** Metrics are published unless logs are silent (local tests have no CloudWatch to read them). */
  readonly metricsEnabled: boolean;
}

/**
 * Logging and metrics settings. Separate from `config()` because the logger exists before any
 * request, even where TABLE_NAME is not set; read once at cold start like the rest.
 */
export function observability(env: NodeJS.ProcessEnv = process.env): Observability {
  const given = (env[ENV.logLevel] || 'info').toUpperCase();
  const logLevel: LogLevel = (LOG_LEVELS as readonly string[]).includes(given) ? (given as LogLevel) : 'INFO';
  return Object.freeze({
    serviceName: 'oauth-import-service',
    metricsNamespace: 'OAuthImportService',
    logLevel,
    metricsEnabled: logLevel !== 'SILENT',
  });
}
