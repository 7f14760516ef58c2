/**
 * Running executions: each task function is called as Step Functions calls a Lambda function
 * (JSON in, JSON out, failures reported as Lambda's Node.js runtime reports them), and every run's
 * outcome and history are kept by execution ARN. Lambda integration tasks (`lambda:invoke`,
 * `.waitForTaskToken`) run through lambda-integration.ts with this endpoint's task tokens.
 */
import './with-resolvers.ts';
import { randomUUID } from 'node:crypto';
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
  failHistoryFull,
  finish,
  type Invocation,
  json,
  MAX_HISTORY_EVENTS,
  MAX_PAYLOAD_BYTES,
  recordEvent,
} from './history.ts';
import { callFunction, runLambdaIntegration } from './lambda-integration.ts';
import { TaskFailure } from './task-failures.ts';
import { TaskTokens } from './task-tokens.ts';

type JSONValue = Parameters<StateMachine['run']>[0];
type RunOptions = NonNullable<Parameters<StateMachine['run']>[1]>;
type TaskHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;

/** The executions of one local endpoint, by ARN. */
export class Executions {
  readonly #byArn = new Map<string, Execution>();
  /** The pending tasks of all executions, for SendTaskSuccess/SendTaskFailure/SendTaskHeartbeat. */
  readonly tokens = new TaskTokens();

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
      output = await callFunction(route.run, invocation.input);
    } catch (thrown) {
      const failure = thrown as TaskFailure;
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
    // `$$.Task.Token` resolves to this in every state; a callback task swaps in a fresh token.
    const sentinel = `local-task-token-${randomUUID()}`;
    const handlers: TaskHandlers = {};
    for (const [stateName, route] of machine.tasks) {
      const { integration } = route;
      handlers[stateName] = integration
        ? (taskInput) =>
            runLambdaIntegration(
              { execution, route: { ...route, integration }, tokens: this.tokens, sentinel },
              taskInput,
            ) as Promise<JSONValue>
        : (taskInput) => this.#invoke(execution, stateName, route, taskInput);
    }
    const running = machine.stateMachine.run(JSON.parse(input) as JSONValue, {
      overrides: { taskResourceLocalHandlers: handlers },
      context: {
        Execution: { Id: arn, Name: name, RoleArn: machine.roleArn, RedriveCount: 0 },
        StateMachine: { Id: machine.arn, Name: machine.name },
        Task: { Token: sentinel },
      },
    });
    execution.abort = running.abort;
    const historyLimit = Number(process.env.LOCAL_STEP_FUNCTIONS_MAX_HISTORY_EVENTS) || MAX_HISTORY_EVENTS;
    const recorded = (async () => {
      for await (const event of running.eventLogs) {
        recordEvent(execution, event);
        if (execution.status !== 'RUNNING' || execution.history.length < historyLimit - 1) continue;
        failHistoryFull(execution, historyLimit);
        this.tokens.closeExecution(arn);
        running.abort();
      }
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
      this.tokens.closeExecution(arn);
      await recorded;
    })();
    this.#byArn.set(arn, execution);
    return execution;
  }

  /** Aborts an execution; a task waiting for its token ends at once and the token answers TaskTimedOut. */
  stop(execution: Execution, error?: string, cause?: string) {
    finish(execution, 'ABORTED', { error, cause });
    this.tokens.closeExecution(execution.arn);
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
