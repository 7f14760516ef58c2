/**
 * How a failed Task reaches aws-local-stepfunctions so that Retry and Catch treat it as AWS does.
 * The library matches `ErrorEquals` against `name`, puts `message` in the Catch output's `Cause`,
 * honours the `isRetryable`/`isCatchable` flags of its own runtime errors, and lets
 * `States.TaskFailed` match anything but instances of its (unexported) `States.Timeout` class.
 */
import { ExecutionError, StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';

/** A failed task: `error` is what `ErrorEquals` matches; a terminal one is neither retried nor caught. */
export class TaskFailure extends Error {
  readonly isRetryable: boolean;
  readonly isCatchable: boolean;
  constructor(error: string, cause: string, terminal = false) {
    super(cause);
    this.name = error;
    this.isRetryable = !terminal;
    this.isCatchable = !terminal;
  }
}

/**
 * The `errorType`/`errorMessage`/`trace` Lambda's Node.js runtime reports for a thrown value; a
 * `TaskFailure` is the Lambda service's own answer and is reported as it is.
 */
export function lambdaFailure(thrown: unknown): TaskFailure {
  // Refused before the function ran (Lambda's own errors, e.g. `Lambda.TooManyRequestsException`).
  if (thrown instanceof TaskFailure) return thrown;
  // Step Functions' own name when Lambda gave no error type: its cause is Step Functions' sentence.
  if (thrown instanceof Error && thrown.name === 'Lambda.Unknown')
    return new TaskFailure(thrown.name, thrown.message);
  const payload =
    thrown instanceof Error
      ? { errorType: thrown.name, errorMessage: thrown.message, trace: (thrown.stack ?? '').split('\n') }
      : { errorType: typeof thrown, errorMessage: String(thrown), trace: [] };
  return new TaskFailure(payload.errorType, JSON.stringify(payload));
}

/** Ends a task whose execution was stopped: the execution is over, nothing may retry or catch it. */
export function abortedFailure(): TaskFailure {
  return new TaskFailure('States.Runtime', 'The execution was stopped', true);
}

type TimeoutClass = new () => Error;
let timeoutClass: TimeoutClass | undefined;

/**
 * Captures the library's `States.Timeout` error class, so timeouts this endpoint measures itself
 * (heartbeats, callback tasks) are excluded from `States.TaskFailed` exactly as AWS excludes them.
 * The class is not exported; one Task that times out after 1 ms yields it. Call once before
 * `timeoutFailure`.
 */
export async function captureTimeoutClass(): Promise<void> {
  if (timeoutClass) return;
  const probe = new StateMachine(
    {
      StartAt: 'Probe',
      States: {
        Probe: {
          Type: 'Task',
          Resource: 'arn:aws:lambda:us-east-1:123456789012:function:probe',
          TimeoutSeconds: 0.001,
          End: true,
        },
      },
    } as StateMachineDefinition,
    { validationOptions: { noValidate: true } },
  );
  const run = probe.run(null, {
    overrides: { taskResourceLocalHandlers: { Probe: () => new Promise(() => {}) } },
  });
  try {
    await run.result;
  } catch (error) {
    const cause = error instanceof ExecutionError ? error.cause : undefined;
    if (cause instanceof Error && cause.name === 'States.Timeout') {
      timeoutClass = cause.constructor as TimeoutClass;
      return;
    }
  }
  throw new Error('aws-local-stepfunctions did not report States.Timeout for a timed-out Task');
}

/**
 * `States.Timeout` (TimeoutSeconds ran out) or `States.HeartbeatTimeout` (no heartbeat within
 * HeartbeatSeconds). Definitions are loaded with `States.HeartbeatTimeout` added beside every
 * `States.Timeout` in ErrorEquals, because in AWS `States.Timeout` matches both.
 */
export function timeoutFailure(heartbeat: boolean): Error {
  if (!timeoutClass) throw new Error('captureTimeoutClass() must run before a task can time out');
  const failure = new timeoutClass();
  if (heartbeat) {
    failure.name = HEARTBEAT_TIMEOUT;
    failure.message = HEARTBEAT_TIMEOUT;
  }
  return failure;
}

export const HEARTBEAT_TIMEOUT = 'States.HeartbeatTimeout';
