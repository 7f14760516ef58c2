/**
 * Running executions: each task function is called as Step Functions calls a Lambda function
 * (JSON in, JSON out, failures reported as Lambda's Node.js runtime reports them), and every run's
 * outcome and history are kept by execution ARN.
 */
import './with-resolvers.ts';
import {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  type StateMachine,
} from 'aws-local-stepfunctions';
import type { LoadedMachine, TaskRoute } from './definition.ts';
import {
  EXECUTION_TIMED_OUT,
  type Execution,
  finish,
  type Invocation,
  json,
  recordEvent,
} from './history.ts';

type JSONValue = Parameters<StateMachine['run']>[0];
type RunOptions = NonNullable<Parameters<StateMachine['run']>[1]>;
type TaskHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;

/** AWS's payload quota for execution input, state input/output and task results. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/**
 * A failed task as Step Functions sees a failed Lambda invocation. aws-local-stepfunctions matches
 * `ErrorEquals` against `name`, puts `message` in the Catch output's `Cause`, and honours the
 * `isRetryable`/`isCatchable` flags of its own runtime errors.
 */
class TaskFailure extends Error {
  readonly isRetryable: boolean;
  readonly isCatchable: boolean;
  constructor(error: string, cause: string, terminal = false) {
    super(cause);
    this.name = error;
    this.isRetryable = !terminal;
    this.isCatchable = !terminal;
  }
}

/** The `errorType`/`errorMessage`/`trace` Lambda's Node.js runtime reports for a thrown value. */
function lambdaFailure(thrown: unknown): TaskFailure {
  const payload =
    thrown instanceof Error
      ? { errorType: thrown.name, errorMessage: thrown.message, trace: (thrown.stack ?? '').split('\n') }
      : { errorType: typeof thrown, errorMessage: String(thrown), trace: [] };
  return new TaskFailure(payload.errorType, JSON.stringify(payload));
}

/** The executions of one local endpoint, by ARN. */
export class Executions {
  readonly #byArn = new Map<string, Execution>();

  constructor(
    readonly region: string,
    readonly accountId: string,
  ) {}

  arnOf(machine: LoadedMachine, name: string): string {
    return `arn:aws:states:${this.region}:${this.accountId}:execution:${machine.name}:${name}`;
  }

  get(arn: string): Execution | undefined {
    return this.#byArn.get(arn);
  }

  async #invoke(
    execution: Execution,
    stateName: string,
    route: TaskRoute,
    input: JSONValue,
  ): Promise<JSONValue> {
    const invocation: Invocation = {
      stateName,
      resource: route.resource,
      input: JSON.stringify(input),
      scheduledAt: Date.now(),
    };
    execution.invocations.push(invocation);
    let output: string;
    try {
      // The function gets and returns JSON, as a Lambda function does: no shared objects, no
      // undefined, no class instances.
      output = JSON.stringify((await route.run(JSON.parse(invocation.input))) ?? null);
    } catch (thrown) {
      const failure = lambdaFailure(thrown);
      invocation.outcome = { succeeded: false, error: failure.name, cause: failure.message };
      invocation.settledAt = Date.now();
      throw failure;
    }
    invocation.outcome = { succeeded: true, output };
    invocation.settledAt = Date.now();
    if (Buffer.byteLength(output) > MAX_PAYLOAD_BYTES) {
      throw new TaskFailure(
        'States.DataLimitExceeded',
        `The state/task '${stateName}' returned a result with a size exceeding the maximum number of bytes service limit.`,
        true,
      );
    }
    return JSON.parse(output) as JSONValue;
  }

  start(machine: LoadedMachine, name: string, input: string): Execution {
    const arn = this.arnOf(machine, name);
    const execution: Execution = {
      arn,
      name,
      machine,
      input,
      status: 'RUNNING',
      startDate: Date.now(),
      history: [],
      invocations: [],
      openStates: new Map(),
      abort: () => {},
      done: Promise.resolve(),
    };
    const handlers: TaskHandlers = {};
    for (const [stateName, route] of machine.tasks) {
      handlers[stateName] = (taskInput) => this.#invoke(execution, stateName, route, taskInput);
    }
    const running = machine.stateMachine.run(JSON.parse(input) as JSONValue, {
      overrides: { taskResourceLocalHandlers: handlers },
      context: {
        Execution: { Id: arn, Name: name, RoleArn: machine.roleArn, RedriveCount: 0 },
        StateMachine: { Id: machine.arn, Name: machine.name },
      },
    });
    execution.abort = running.abort;
    const recorded = (async () => {
      for await (const event of running.eventLogs) recordEvent(execution, event);
    })();
    execution.done = (async () => {
      try {
        const output = await running.result;
        finish(execution, 'SUCCEEDED', { output: json(output) });
      } catch (error) {
        if (error instanceof ExecutionAbortedError) {
          finish(execution, 'ABORTED', {});
        } else if (error instanceof ExecutionTimeoutError) {
          finish(execution, 'TIMED_OUT', EXECUTION_TIMED_OUT);
        } else if (error instanceof ExecutionError && error.cause instanceof Error) {
          finish(execution, 'FAILED', { error: error.cause.name, cause: error.cause.message });
        } else {
          finish(execution, 'FAILED', { error: 'States.Runtime', cause: String(error) });
        }
      }
      await recorded;
    })();
    this.#byArn.set(arn, execution);
    return execution;
  }

  stop(execution: Execution, error?: string, cause?: string) {
    finish(execution, 'ABORTED', { error, cause });
    execution.abort();
  }

  /** Aborts every running execution and waits until all of them have ended. */
  async stopAll(): Promise<void> {
    for (const execution of this.#byArn.values()) {
      if (execution.status === 'RUNNING') this.stop(execution);
    }
    await Promise.allSettled([...this.#byArn.values()].map((execution) => execution.done));
  }
}
