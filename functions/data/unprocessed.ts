import { setTimeout as sleep } from 'node:timers/promises';
import { AWS_MAX_ATTEMPTS, backoffWaitMs } from '#shared/aws-clients';
import { TransientFailure } from '#shared/errors';

/**
 * Sends a batch (BatchWriteItem's requests, BatchGetItem's keys) and re-sends what DynamoDB left
 * unprocessed (`UnprocessedItems`, `UnprocessedKeys`: the part of a batch it throttled, in a 200
 * answer) until nothing is, waiting between sends as the SDK waits between retries (full jitter,
 * 50 ms doubling, each wait at most 1 s), as AWS asks of a batch's unprocessed part; after
 * `AWS_MAX_ATTEMPTS` sends with some of it still unprocessed, fails with `TransientFailure`
 * (a route answers 503, a step is retried by the workflow). `send` answers what was left.
 */
export async function untilProcessed<T>(
  action: 'BatchWriteItem' | 'BatchGetItem',
  batch: readonly T[],
  send: (pending: readonly T[]) => Promise<readonly T[] | undefined>,
): Promise<void> {
  let pending = await send(batch);
  for (let retry = 0; pending && pending.length > 0; retry += 1) {
    if (retry + 1 >= AWS_MAX_ATTEMPTS) {
      throw new TransientFailure(
        `DynamoDB left ${pending.length} of ${batch.length} items of a ${action} unprocessed ${AWS_MAX_ATTEMPTS} times`,
      );
    }
    await sleep(backoffWaitMs(retry));
    pending = await send(pending);
  }
}
