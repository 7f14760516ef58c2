/**
 * Structured JSON logs and CloudWatch metrics, on Powertools for AWS Lambda: one JSON line per
 * record (level, message, timestamp, service, the Lambda context and the API Gateway request id as
 * `correlation_id`), and EMF lines that CloudWatch turns into metrics. Callers pass explicit
 * fields; request headers, paths and bodies are never logged, so credentials cannot leak here
 * (test/e2e/no-secrets-in-logs.test.ts greps every line of an end-to-end run for its secrets).
 */
import { Logger, LogLevelThreshold } from '@aws-lambda-powertools/logger';
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { observability } from './config.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';

const settings = observability();

export const logger = new Logger({ serviceName: settings.serviceName, logLevel: settings.logLevel });

/** The invocation under way (set by `logContext`), and the one whose context the logger carries. */
interface Invocation {
  readonly context: Context;
  readonly requestId: string | undefined;
}
let current: Invocation | undefined;
let applied: Invocation | undefined;
/** Whether an invocation has started in this process: the first one is the cold start. */
let started = false;

/** Whether a record at `level` would be written (the level Powertools settled on, environment included). */
const writes = (level: Level): boolean =>
  logger.level <= LogLevelThreshold[level.toUpperCase() as Uppercase<Level>];

/**
 * Gives the logger the context of the invocation under way, once per invocation and only when a
 * record is written: most invocations write none, and setting it on every invocation took about a
 * third of the JSON stack's middleware time (docs/decisions.md, issue 19).
 */
function withInvocation(): void {
  if (current === applied || current === undefined) return;
  logger.addContext(current.context);
  if (current.requestId) logger.setCorrelationId(current.requestId);
  applied = current;
}

/** The logger's interface before Powertools, kept for its callers. */
export function log(level: Level, message: string, fields: Record<string, unknown> = {}): void {
  if (!writes(level)) return;
  withInvocation();
  logger[level](message, fields);
}

/** An error that escaped a handler: a bug. Logged with its stack; never with the request. */
export function logUnhandled(route: string, requestId: string | undefined, error: unknown): void {
  withInvocation();
  logger.error('unhandled error', {
    route,
    requestId,
    error:
      error instanceof Error
        ? { name: error.name, message: error.message, stack: error.stack }
        : String(error),
  });
}

/**
 * The signals operators watch, each a CloudWatch metric (Count) in the service's namespace:
 * app-side token checks, password and one-time-code failures, and code exchanges.
 */
export type Signal =
  | 'TokenCheckSucceeded'
  | 'TokenCheckFailed'
  | 'LoginFailed'
  | 'CodeExchangeSucceeded'
  | 'CodeExchangeFailed'
  | 'TokenRefreshSucceeded'
  | 'TokenRefreshFailed'
  | 'ImportCompleted'
  | 'ImportFailed'
  /** An import event EventBridge did not take (`services/import-events.ts`). */
  | 'ImportEventNotPublished'
  /** A security event EventBridge did not take (`services/security-log.ts`); it is in the log all the same. */
  | 'SecurityEventNotPublished';

/**
 * One occurrence of `signal` in CloudWatch's embedded metric format: a JSON log line that
 * CloudWatch Logs turns into a metric (Count, dimension `service`), with no API call.
 */
export const emfLine = (signal: Signal, timestamp: number, namespace: string, service: string): string =>
  JSON.stringify({
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        { Namespace: namespace, Dimensions: [['service']], Metrics: [{ Name: signal, Unit: 'Count' }] },
      ],
    },
    service,
    [signal]: 1,
  });

/**
 * Counts one occurrence of `signal`, published at once: one EMF line, written to standard output
 * itself (the Lambda runtime's `console` would prefix it, and CloudWatch would not read it as EMF).
 * Written here rather than by Powertools Metrics: the same line without its store and flush, and
 * one dependency less (docs/decisions.md, issue 19).
 */
export function countSignal(signal: Signal): void {
  if (!settings.metricsEnabled) return;
  process.stdout.write(`${emfLine(signal, Date.now(), settings.metricsNamespace, settings.serviceName)}\n`);
}

/**
 * First middleware of every stack: every record of the invocation carries the Lambda context
 * (function name, request id, cold start) and the API Gateway request id as `correlation_id`, and
 * the route is logged at debug level. The context is handed to the logger when the invocation
 * writes its first record (`withInvocation`), except on the cold start: that one is handed at
 * once, so that Powertools, which counts cold starts by calls, marks exactly the first
 * invocation's records `cold_start: true`.
 */
export const logContext = <
  E extends Pick<APIGatewayProxyEvent, 'requestContext' | 'resource' | 'httpMethod'>,
  R,
>(): middy.MiddlewareObj<E, R> => {
  /**
   * The invocation is over: records written after it (by the local stack's other servers, which
   * share this process) must not carry its ids. Its correlation id goes if it was handed over; the
   * Lambda context stays with the logger until the next one, as Powertools leaves it.
   */
  const end = (request: middy.Request<E, R>) => {
    if (current?.context !== request.context) return;
    if (applied === current) logger.resetKeys();
    current = undefined;
    applied = undefined;
  };
  return {
    before: (request) => {
      current = { context: request.context, requestId: request.event.requestContext?.requestId };
      if (!started) withInvocation();
      started = true;
      // The route template, never the path: paths carry tokens (`/applications/{id}/tokens/{token}`).
      log('debug', 'request', { method: request.event.httpMethod, route: request.event.resource });
    },
    after: end,
    onError: end,
  };
};
