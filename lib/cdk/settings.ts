import { RemovalPolicy } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import { DEFAULT_BATCH_CONCURRENCY, DEFAULT_LARGE_FILE_BYTES } from '#shared/config';

/**
 * Deployment settings, read once from CDK context (`cdk.json` or `-c key=value`) and checked, so
 * that a typo fails `cdk synth` instead of deploying something else. Values given with `-c`
 * arrive as strings; numbers and booleans are parsed here.
 */
export const CONTEXT = {
  /** CloudFormation stack name. */
  stackName: 'stackName',
  /** `retain` (default) or `destroy` for the table and log groups; use `destroy` only for dev stacks. */
  removalPolicy: 'removalPolicy',
  /** Lower-case vendor name handlers report (ENV.vendor). */
  vendor: 'vendor',
  /**
   * Public origin of a custom domain, e.g. `https://api.example.com` (no path): the web
   * distribution's name and the URL variables. Needs `certificateArn`.
   */
  publicUrl: 'publicUrl',
  /** ACM certificate for the host of `publicUrl`, in us-east-1 (CloudFront reads it from there). */
  certificateArn: 'certificateArn',
  /** Stage-wide steady-state requests per second. */
  throttlingRateLimit: 'throttlingRateLimit',
  /** Stage-wide burst of requests. */
  throttlingBurstLimit: 'throttlingBurstLimit',
  /** ARN of an existing regional WAFv2 web ACL to associate with the API stage. */
  webAclArn: 'webAclArn',
  /** ARN of an existing WAFv2 web ACL of scope CLOUDFRONT (us-east-1) for the web distribution. */
  distributionWebAclArn: 'distributionWebAclArn',
  /**
   * Whether this stack sets the region's account-wide API Gateway CloudWatch Logs role (needed for
   * access and execution logs). `false` when the platform already manages that setting.
   */
  apiGatewayCloudWatchRole: 'apiGatewayCloudWatchRole',
  /**
   * NAT gateways of the import VPC (one per availability zone up to 2; default 1). The workers
   * reach origins, KMS and Step Functions through them; 2 survives the loss of one zone.
   */
  natGateways: 'natGateways',
  /** The time budget of one chunk of a long import step, in seconds (default 600, at most 840). */
  importChunkSeconds: 'importChunkSeconds',
  /** Files larger than this many bytes are large files (default 100 MiB). */
  largeFileBytes: 'largeFileBytes',
  /** Fewest tasks of the Git front end (default 1; 2 keeps Git up through the loss of a zone). */
  gitFrontendMinTasks: 'gitFrontendMinTasks',
  /** Most tasks the Git front end scales out to (default 10). */
  gitFrontendMaxTasks: 'gitFrontendMaxTasks',
  /**
   * Reserved concurrency of each Git step of the import workflow (Detect, ImportRawHistory,
   * RewriteHistory, Push): at most this many imports in one step at once, and that many always
   * available to imports whatever else the account runs. Default: none reserved (the workers share
   * the account's unreserved concurrency, 1,000 per region by default). Lambda keeps 100 of the
   * account's concurrency unreserved, so four times this value must fit below the quota minus 100.
   */
  importWorkerConcurrency: 'importWorkerConcurrency',
  /**
   * Imports of one batch (`POST /user/import-batches`) that run at once; the others wait their
   * turn. Default 4: a batch of 200 projects then holds at most 4 workers and leaves the rest of
   * the worker pool to other imports.
   */
  importBatchConcurrency: 'importBatchConcurrency',
} as const;

/** Lambda's 15-minute cap, the worker functions' timeout. */
export const WORKER_TIMEOUT_SECONDS = 900;
/** A chunk ends at least a minute before the worker's timeout, to save its cursor and progress. */
export const MAX_IMPORT_CHUNK_SECONDS = WORKER_TIMEOUT_SECONDS - 60;
/** The import VPC spans two availability zones. */
export const MAX_AVAILABILITY_ZONES = 2;

export interface ServiceSettings {
  readonly stackName: string;
  readonly removalPolicy: RemovalPolicy;
  readonly vendor: string;
  /** An origin (`https://host`); undefined: the web distribution's own `*.cloudfront.net` name. */
  readonly publicUrl: string | undefined;
  /** Set exactly when `publicUrl` is. */
  readonly certificateArn: string | undefined;
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
  readonly webAclArn: string | undefined;
  readonly distributionWebAclArn: string | undefined;
  readonly apiGatewayCloudWatchRole: boolean;
  readonly natGateways: number;
  readonly importChunkSeconds: number;
  readonly largeFileBytes: number;
  readonly gitFrontendTasks: { readonly min: number; readonly max: number };
  /** Reserved concurrency of each Git step; undefined: none reserved. */
  readonly importWorkerConcurrency: number | undefined;
  /** Imports of one batch that run at once. */
  readonly importBatchConcurrency: number;
}

export const DEFAULT_SETTINGS = {
  stackName: 'OAuthImportService',
  vendor: 'github',
  throttlingRateLimit: 100,
  throttlingBurstLimit: 200,
  natGateways: 1,
  importChunkSeconds: 600,
  largeFileBytes: DEFAULT_LARGE_FILE_BYTES,
  gitFrontendMinTasks: 1,
  gitFrontendMaxTasks: 10,
  importBatchConcurrency: DEFAULT_BATCH_CONCURRENCY,
} as const;

function text(node: Node, key: string): string | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string')
    throw new Error(`context ${key} must be a string, got ${JSON.stringify(value)}`);
  return value;
}

function positiveInteger(node: Node, key: string, fallback: number): number {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return fallback;
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(number) || number <= 0) {
    throw new Error(`context ${key} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return number;
}

function optionalPositiveInteger(node: Node, key: string): number | undefined {
  const value: unknown = node.tryGetContext(key);
  return value === undefined || value === null || value === '' ? undefined : positiveInteger(node, key, 0);
}

function atMost(key: string, value: number, limit: number, why: string): number {
  if (value > limit) throw new Error(`context ${key} must be at most ${limit} (${why}), got ${value}`);
  return value;
}

function flag(node: Node, key: string, fallback: boolean): boolean {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`context ${key} must be true or false, got ${JSON.stringify(value)}`);
}

function removalPolicy(node: Node): RemovalPolicy {
  const value = text(node, CONTEXT.removalPolicy) ?? 'retain';
  if (value === 'retain') return RemovalPolicy.RETAIN;
  if (value === 'destroy') return RemovalPolicy.DESTROY;
  throw new Error(`context ${CONTEXT.removalPolicy} must be 'retain' or 'destroy', got '${value}'`);
}

function publicUrl(node: Node): string | undefined {
  const value = text(node, CONTEXT.publicUrl);
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`context ${CONTEXT.publicUrl} must be an absolute URL, got '${value}'`);
  }
  if (url.protocol !== 'https:' || url.search !== '' || url.hash !== '' || url.username !== '') {
    throw new Error(
      `context ${CONTEXT.publicUrl} must be an https URL without query, fragment or credentials`,
    );
  }
  // The web distribution answers for a host on 443; it has no way to strip a path prefix.
  if (url.pathname !== '/' || url.port !== '') {
    throw new Error(
      `context ${CONTEXT.publicUrl} must be https://<host>, without port or path, got '${value}'`,
    );
  }
  return url.origin;
}

/** The certificate CloudFront serves `publicUrl` with: required with it, meaningless without it. */
function certificateArn(node: Node, publicUrl: string | undefined): string | undefined {
  const value = text(node, CONTEXT.certificateArn);
  if (publicUrl === undefined) {
    if (value !== undefined) throw new Error(`context ${CONTEXT.certificateArn} needs ${CONTEXT.publicUrl}`);
    return undefined;
  }
  if (value === undefined) {
    throw new Error(
      `context ${CONTEXT.publicUrl} needs ${CONTEXT.certificateArn}: an ACM certificate in us-east-1 for ${new URL(publicUrl).hostname}`,
    );
  }
  if (!/^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate\/[\w-]+$/.test(value)) {
    throw new Error(
      `context ${CONTEXT.certificateArn} must be an ACM certificate ARN in us-east-1, got '${value}'`,
    );
  }
  return value;
}

function gitFrontendTasks(node: Node): ServiceSettings['gitFrontendTasks'] {
  const min = positiveInteger(node, CONTEXT.gitFrontendMinTasks, DEFAULT_SETTINGS.gitFrontendMinTasks);
  const max = positiveInteger(node, CONTEXT.gitFrontendMaxTasks, DEFAULT_SETTINGS.gitFrontendMaxTasks);
  if (min > max) {
    throw new Error(
      `context ${CONTEXT.gitFrontendMinTasks} (${min}) must be at most ${CONTEXT.gitFrontendMaxTasks} (${max})`,
    );
  }
  return { min, max };
}

export function readSettings(node: Node): ServiceSettings {
  const vendor = text(node, CONTEXT.vendor) ?? DEFAULT_SETTINGS.vendor;
  // The same rule as readConfig() applies at cold start; failing here keeps a bad value undeployed.
  if (!/^[a-z0-9-]+$/.test(vendor)) {
    throw new Error(`context ${CONTEXT.vendor} must be lower-case letters, digits or '-'`);
  }
  const throttling = {
    rateLimit: positiveInteger(node, CONTEXT.throttlingRateLimit, DEFAULT_SETTINGS.throttlingRateLimit),
    burstLimit: positiveInteger(node, CONTEXT.throttlingBurstLimit, DEFAULT_SETTINGS.throttlingBurstLimit),
  };
  const origin = publicUrl(node);
  return Object.freeze({
    stackName: text(node, CONTEXT.stackName) ?? DEFAULT_SETTINGS.stackName,
    removalPolicy: removalPolicy(node),
    vendor,
    publicUrl: origin,
    certificateArn: certificateArn(node, origin),
    throttling,
    webAclArn: text(node, CONTEXT.webAclArn),
    distributionWebAclArn: text(node, CONTEXT.distributionWebAclArn),
    apiGatewayCloudWatchRole: flag(node, CONTEXT.apiGatewayCloudWatchRole, true),
    natGateways: atMost(
      CONTEXT.natGateways,
      positiveInteger(node, CONTEXT.natGateways, DEFAULT_SETTINGS.natGateways),
      MAX_AVAILABILITY_ZONES,
      'one per availability zone',
    ),
    importChunkSeconds: atMost(
      CONTEXT.importChunkSeconds,
      positiveInteger(node, CONTEXT.importChunkSeconds, DEFAULT_SETTINGS.importChunkSeconds),
      MAX_IMPORT_CHUNK_SECONDS,
      "a minute below the workers' 15-minute timeout",
    ),
    largeFileBytes: positiveInteger(node, CONTEXT.largeFileBytes, DEFAULT_SETTINGS.largeFileBytes),
    gitFrontendTasks: gitFrontendTasks(node),
    importWorkerConcurrency: optionalPositiveInteger(node, CONTEXT.importWorkerConcurrency),
    importBatchConcurrency: positiveInteger(
      node,
      CONTEXT.importBatchConcurrency,
      DEFAULT_SETTINGS.importBatchConcurrency,
    ),
  });
}
