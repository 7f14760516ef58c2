import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';

type RetryStrategy = Extract<NonNullable<DynamoDBClientConfig['retryStrategy']>, { recordSuccess: unknown }>;
type RetryToken = Awaited<ReturnType<RetryStrategy['acquireInitialRetryToken']>>;

/**
 * Attempts of one AWS call that the service throttles (or that fails in transit) before the
 * caller sees the error. With 30% of requests refused, 8 attempts fail together once in 15,000
 * calls; the caller then answers 503 (a route) or fails its step with `TransientFailure`, which
 * the workflow's Retry repeats with its own, longer backoff (docs/decisions.md, issue 36).
 */
export const AWS_MAX_ATTEMPTS = 8;
/** Full-jitter exponential backoff between attempts: 50 ms doubling, each wait at most 1 s. */
const BACKOFF_BASE_MS = 50;
const BACKOFF_CAP_MS = 1_000;

/**
 * The longest all retries of one call can wait: 3.55 s (1.8 s on average), so that a route can
 * still answer within its function's 10 s and API Gateway's 29 s after a call gave up.
 */
export const AWS_MAX_RETRY_WAIT_MS = Array.from({ length: AWS_MAX_ATTEMPTS - 1 }, (_, retry) =>
  Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry),
).reduce((sum, wait) => sum + wait, 0);

/**
 * The wait before retry `retry` (0 for the first): full jitter, a random part of 50 ms doubling,
 * at most 1 s. The SDK's retries use it, and so do the re-sends of a batch's unprocessed part.
 */
export const backoffWaitMs = (retry: number): number =>
  Math.floor(Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry));

const token = (count: number, delay: number): RetryToken => ({
  getRetryCount: () => count,
  getRetryDelay: () => delay,
});

/**
 * The SDK's retry decision for the service's clients: throttling and transient errors (the SDK's
 * own classification, which names `ProvisionedThroughputExceededException`, `ThrottlingException`,
 * `RequestLimitExceeded`, `TooManyRequestsException`, timeouts and 5xx) are retried
 * `AWS_MAX_ATTEMPTS` times with full-jitter backoff bounded for Lambda's time limits; nothing else.
 * Unlike the SDK's standard strategy there is no shared retry quota and no 1 s throttling base
 * (up to 20 s a wait): one Lambda sandbox serves one request at a time, so its retries are bounded
 * by the attempts alone, and a route's budget is seconds.
 */
const boundedRetries: RetryStrategy = {
  acquireInitialRetryToken: async () => token(0, 0),
  refreshRetryTokenForRetry: async (previous, { errorType }) => {
    const retry = previous.getRetryCount();
    if ((errorType !== 'THROTTLING' && errorType !== 'TRANSIENT') || retry + 1 >= AWS_MAX_ATTEMPTS) {
      throw new Error('no retry left');
    }
    return token(retry + 1, backoffWaitMs(retry));
  },
  recordSuccess: () => undefined,
};

/**
 * How an AWS SDK client is built: in AWS with the SDK's defaults (the function's role and region);
 * with a local stand-in's endpoint (DynamoDB Local, the Step Functions, EventBridge or Lambda
 * stand-ins of `npm start`) at that endpoint, with made-up credentials the stand-ins ignore. Both
 * with the service's retry decision (`boundedRetries`).
 */
export const awsClientSettings = (localEndpoint: string | undefined) => ({
  maxAttempts: AWS_MAX_ATTEMPTS,
  retryStrategy: boundedRetries,
  ...(localEndpoint
    ? {
        endpoint: localEndpoint,
        region: process.env.AWS_REGION ?? 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }
    : {}),
});
