import { executionNameOf } from '#domain/imports';
import type { StepInput } from '#services/import-worker';
import { storageFullOr } from '#services/storage-full';
import { logger } from '#shared/log';

/**
 * A Step Functions task handler: the step's service call, with every log record of the invocation
 * carrying the execution's name (`owner.repo.attempt-N` or `owner.repo.sync-N`) as its correlation id, so a step's logs
 * and its execution in the console find each other. A step that found its storage full fails
 * with `StorageFull` (`#services/storage-full`).
 */
export function workflowTask<Input extends StepInput, Output>(
  step: string,
  run: (input: Input) => Promise<Output>,
): (input: Input) => Promise<Output> {
  return async (input) => {
    logger.setCorrelationId(executionNameOf(input));
    logger.debug('import step', { step, attempt: input.attempt });
    try {
      return await run(input);
    } catch (error) {
      throw await storageFullOr(error, input);
    }
  };
}
