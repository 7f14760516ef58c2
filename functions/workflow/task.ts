import { executionNameOf } from '#domain/imports';
import type { StepInput } from '#services/import-worker';
import { logger } from '#shared/log';

/**
 * A Step Functions task handler: the step's service call, with every log record of the invocation
 * carrying the execution's name (`owner.repo.attempt-N` or `owner.repo.sync-N`) as its correlation id, so a step's logs
 * and its execution in the console find each other.
 */
export function workflowTask<Input extends StepInput, Output>(
  step: string,
  run: (input: Input) => Promise<Output>,
): (input: Input) => Promise<Output> {
  return async (input) => {
    logger.setCorrelationId(executionNameOf(input));
    logger.debug('import step', { step, attempt: input.attempt });
    return run(input);
  };
}
