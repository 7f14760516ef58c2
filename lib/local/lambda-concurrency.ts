/**
 * Lambda's concurrency limit, for the local stand-ins: at most `limit` invocations of the functions
 * sharing it run at once (an account's unreserved concurrency, or a function's reserved
 * concurrency); one more is refused at once, without running, as Lambda refuses it: Invoke
 * answers HTTP 429 `TooManyRequestsException` ("Rate Exceeded."), which Step Functions reports to
 * the Task as `Lambda.TooManyRequestsException` (its Retry and Catch see that name).
 */
import { randomUUID } from 'node:crypto';
import { TaskFailure } from './step-functions/task-failures.ts';

export interface ConcurrencyLimit {
  readonly limit: number;
  /** Invocations running now, the most that ever ran together, and those refused. */
  readonly running: number;
  readonly peak: number;
  readonly refused: number;
  /** Runs `invocation` within the limit, or throws Step Functions' failure for a refused one. */
  run<T>(invocation: () => Promise<T>): Promise<T>;
  /**
   * Takes a place within the limit, to be given back once the invocation has ended; undefined
   * when Lambda refuses it (counted as refused). For callers that answer a refusal their own way
   * (the local API Gateway).
   */
  enter(): (() => void) | undefined;
}

/** The Cause Step Functions records for a Task whose Invoke Lambda throttled. */
const throttledCause = (): string =>
  `Rate Exceeded. (Service: AWSLambda; Status Code: 429; Error Code: TooManyRequestsException; Request ID: ${randomUUID()}; Proxy: null)`;

export function concurrencyLimit(limit: number): ConcurrencyLimit {
  if (!Number.isInteger(limit) || limit < 1)
    throw new Error(`a concurrency limit is a positive integer, not ${limit}`);
  const state = { limit, running: 0, peak: 0, refused: 0 };
  const enter = (): (() => void) | undefined => {
    if (state.running >= limit) {
      state.refused += 1;
      return undefined;
    }
    state.running += 1;
    state.peak = Math.max(state.peak, state.running);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      state.running -= 1;
    };
  };
  return Object.assign(state, {
    enter,
    async run<T>(invocation: () => Promise<T>): Promise<T> {
      const leave = enter();
      if (!leave) throw new TaskFailure('Lambda.TooManyRequestsException', throttledCause());
      try {
        return await invocation();
      } finally {
        leave();
      }
    },
  });
}
