import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AWS_MAX_ATTEMPTS } from '#shared/aws-clients';
import { TransientFailure } from '#shared/errors';

/** DynamoDB's throttling errors (its API reference; the SDK retries each as throttling). */
const THROTTLING_ERRORS = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);
/** A transaction's cancellation reasons that say an item was throttled. */
const THROTTLING_REASONS = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded']);

interface DynamoDbError {
  name?: string;
  CancellationReasons?: Array<{ Code?: string }>;
  $retryable?: { throttling?: boolean };
}

/**
 * A transaction cancelled only because DynamoDB throttled some of its items: every other item's
 * reason is `None`. Never a failed condition (`ConditionalCheckFailed` is a decision about the
 * data, whatever else was throttled) nor a conflict with another transaction.
 */
function throttledTransaction(error: DynamoDbError): boolean {
  if (error.name !== 'TransactionCanceledException') return false;
  const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None');
  return (
    codes.some((code) => THROTTLING_REASONS.has(code)) &&
    codes.every((code) => code === 'None' || THROTTLING_REASONS.has(code))
  );
}

const throttled = (error: DynamoDbError): boolean =>
  THROTTLING_ERRORS.has(error.name ?? '') || throttledTransaction(error);

/**
 * Makes DynamoDB's throttling survivable and unmistakable on `client`:
 * - a transaction cancelled by throttling alone is retried by the SDK as throttling (the SDK
 *   retries no `TransactionCanceledException` by itself);
 * - a throttle that outlasts every attempt reaches the caller as `TransientFailure`, so that no
 *   condition or contention check reads it as a decision about the data.
 */
export function survivesThrottling(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const failure = error as DynamoDbError;
        if (throttledTransaction(failure)) failure.$retryable = { throttling: true };
        throw error;
      }
    },
    // Inside the SDK's retry middleware (finalizeRequest, high priority), which reads `$retryable`.
    { step: 'finalizeRequest', priority: 'low', name: 'throttledTransactionRetryable' },
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const failure = error as DynamoDbError;
        if (!throttled(failure)) throw error;
        throw new TransientFailure(
          `DynamoDB throttled ${context.commandName ?? 'a request'} ${AWS_MAX_ATTEMPTS} times (${failure.name})`,
          { cause: error },
        );
      }
    },
    { step: 'initialize', priority: 'high', name: 'throttlingAsTransientFailure' },
  );
}
