/**
 * Structured JSON logs and CloudWatch metrics, on Powertools for AWS Lambda: one JSON line per
 * record (level, message, timestamp, service, the Lambda context and the API Gateway request id as
 * `correlation_id`), and EMF lines that CloudWatch turns into metrics. Callers pass explicit
 * fields; request headers, paths and bodies are never logged, so credentials cannot leak here
 * (test/e2e/no-secrets-in-logs.test.ts greps every line of an end-to-end run for its secrets).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { observability } from './config.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';

const settings = observability();

export const logger = new Logger({ serviceName: settings.serviceName, logLevel: settings.logLevel });

/** The logger's interface before Powertools, kept for its callers. */
export function log(level: Level, message: string, fields: Record<string, unknown> = {}): void {
  logger[level](message, fields);
}

/** An error that escaped a handler: a bug. Logged with its stack; never with the request. */
export function logUnhandled(route: string, requestId: string | undefined, error: unknown): void {
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
  | 'ImportFailed';

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
 * First middleware of every stack: adds the Lambda context (function name, request id, cold
 * start) and the API Gateway request id as `correlation_id` to every record of the invocation,
 * and logs the route at debug level.
 */
export const logContext = <
  E extends Pick<APIGatewayProxyEvent, 'requestContext' | 'resource' | 'httpMethod'>,
  R,
>(): middy.MiddlewareObj<E, R> => {
  const inject = injectLambdaContext(logger, { resetKeys: true }) as middy.MiddlewareObj<E, R>;
  return {
    before: async (request) => {
      await inject.before?.(request);
      const requestId = request.event.requestContext?.requestId;
      if (requestId) logger.setCorrelationId(requestId);
      // The route template, never the path: paths carry tokens (`/applications/{id}/tokens/{token}`).
      logger.debug('request', { method: request.event.httpMethod, route: request.event.resource });
    },
    after: inject.after,
    onError: inject.onError,
  };
};
