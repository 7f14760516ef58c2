/**
 * An execution's state and its history: maps aws-local-stepfunctions' event log onto the event
 * types Step Functions writes (LambdaFunction* events for bare Lambda ARN tasks, `<Type>State*`);
 * service integration tasks write their Task* events themselves (`recordTaskEvent`).
 */
import type { StateMachine } from 'aws-local-stepfunctions';
import type { LoadedMachine } from './definition.ts';

type LibraryEvent = ReturnType<StateMachine['run']>['eventLogs'] extends AsyncGenerator<infer E> ? E : never;
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED' | 'TIMED_OUT';

/** One call of a task function, kept until the history records it. */
export interface Invocation {
  stateName: string;
  resource: string;
  input: string;
  scheduledAt: number;
  settledAt?: number;
  outcome?: { succeeded: true; output: string } | { succeeded: false; error: string; cause: string };
}

interface HistoryEvent {
  timestamp: number;
  type: string;
  detailsKey?: string;
  details?: Record<string, unknown>;
}

export interface Execution {
  arn: string;
  name: string;
  machine: LoadedMachine;
  input: string;
  status: ExecutionStatus;
  startDate: number;
  stopDate?: number;
  output?: string;
  error?: string;
  cause?: string;
  history: HistoryEvent[];
  /** Task calls not yet written to the history, oldest first. */
  invocations: Invocation[];
  /** Entered and not exited states, for the `<Type>StateAborted` events of a stopped execution. */
  openStates: Map<string, string>;
  /** The history reached `MAX_HISTORY_EVENTS`: the execution failed, nothing more is recorded. */
  historyFull?: boolean;
  abort(): void;
  done: Promise<void>;
}

/** What AWS reports for an execution that ran past its top-level TimeoutSeconds. */
export const EXECUTION_TIMED_OUT = {
  error: 'States.Timeout',
  cause: 'The execution ran longer than its TimeoutSeconds.',
};
/**
 * AWS's quota of events in one execution's history: an execution that reaches it fails. Locally
 * `LOCAL_STEP_FUNCTIONS_MAX_HISTORY_EVENTS` lowers it, so that a test reaches it in seconds.
 */
export const MAX_HISTORY_EVENTS = 25_000;
export const HISTORY_LIMIT_EXCEEDED = {
  error: 'States.Runtime',
  cause: `The execution reached the maximum number of history events (${MAX_HISTORY_EVENTS}).`,
};
/** AWS's payload quota for execution input, state input/output and task results. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
const ABORTABLE_STATE_TYPES = new Set(['Task', 'Wait', 'Map', 'Parallel']);
const DATA_DETAILS = { truncated: false };

export function finish(
  execution: Execution,
  status: ExecutionStatus,
  result: { output?: string; error?: string; cause?: string },
) {
  if (execution.status !== 'RUNNING') return;
  execution.status = status;
  execution.stopDate = Date.now();
  Object.assign(execution, result);
}

/** A JSON value as the API carries it: a JSON document in a string. */
export function json(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** An error cause: the library gives strings, or objects for its own nested errors. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : json(value);
}

export function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}

function addEvent(
  execution: Execution,
  type: string,
  timestamp: number,
  details?: Record<string, unknown>,
  key?: string,
) {
  const detailsKey = details ? (key ?? `${type[0]?.toLowerCase()}${type.slice(1)}EventDetails`) : undefined;
  execution.history.push({ timestamp, type, detailsKey, details: details && withoutUndefined(details) });
}

export type TaskEventType =
  | 'TaskScheduled'
  | 'TaskStarted'
  | 'TaskSubmitted'
  | 'TaskSucceeded'
  | 'TaskFailed'
  | 'TaskTimedOut';

/** Writes one event of a service integration task (`taskScheduledEventDetails`, ...), timestamped now. */
export function recordTaskEvent(execution: Execution, type: TaskEventType, details: Record<string, unknown>) {
  addEvent(execution, type, Date.now(), details);
}

/** Writes the Lambda events of the oldest pending call of a Task state, once that state ends. */
function recordInvocation(
  execution: Execution,
  stateName: string,
  failure?: { Error: string; Cause: unknown; timestamp: number },
) {
  const index = execution.invocations.findIndex((invocation) => invocation.stateName === stateName);
  if (index < 0) return; // the state failed before calling its function, or a Catch already recorded it
  const [invocation] = execution.invocations.splice(index, 1);
  if (!invocation) return;
  addEvent(execution, 'LambdaFunctionScheduled', invocation.scheduledAt, {
    resource: invocation.resource,
    input: invocation.input,
    inputDetails: DATA_DETAILS,
  });
  addEvent(execution, 'LambdaFunctionStarted', invocation.scheduledAt);
  const { outcome, settledAt = Date.now() } = invocation;
  if (outcome?.succeeded) {
    addEvent(execution, 'LambdaFunctionSucceeded', settledAt, {
      output: outcome.output,
      outputDetails: DATA_DETAILS,
    });
  } else if (outcome) {
    addEvent(execution, 'LambdaFunctionFailed', settledAt, { error: outcome.error, cause: outcome.cause });
  } else if (failure) {
    // Still running: the Task's TimeoutSeconds ran out.
    addEvent(execution, 'LambdaFunctionTimedOut', failure.timestamp, {
      error: failure.Error,
      cause: text(failure.Cause),
    });
  }
}

/** The history is full: the execution fails with its last event, as AWS fails it. */
export function failHistoryFull(execution: Execution, limit: number) {
  execution.historyFull = true;
  const result = {
    ...HISTORY_LIMIT_EXCEEDED,
    cause: HISTORY_LIMIT_EXCEEDED.cause.replace(/\(\d+\)/, `(${limit})`),
  };
  addEvent(execution, 'ExecutionFailed', Date.now(), result);
  finish(execution, 'FAILED', result);
}

/** Maps aws-local-stepfunctions' event log onto Step Functions history event types. */
export function recordEvent(execution: Execution, event: LibraryEvent) {
  if (execution.historyFull) return;
  const at = event.timestamp;
  switch (event.type) {
    case 'ExecutionStarted':
      addEvent(execution, 'ExecutionStarted', at, {
        input: execution.input,
        inputDetails: DATA_DETAILS,
        roleArn: execution.machine.roleArn,
      });
      return;
    case 'ExecutionSucceeded':
      addEvent(execution, 'ExecutionSucceeded', at, {
        output: json(event.output),
        outputDetails: DATA_DETAILS,
      });
      return;
    case 'ExecutionFailed':
      addEvent(execution, 'ExecutionFailed', at, { error: event.Error, cause: text(event.Cause) });
      return;
    case 'ExecutionTimeout':
      addEvent(execution, 'ExecutionTimedOut', at, EXECUTION_TIMED_OUT);
      return;
    case 'ExecutionAborted':
      for (const type of [...execution.openStates.values()].reverse()) {
        if (ABORTABLE_STATE_TYPES.has(type)) addEvent(execution, `${type}StateAborted`, at);
      }
      addEvent(execution, 'ExecutionAborted', at, { error: execution.error, cause: execution.cause });
      return;
    case 'StateEntered': {
      const { name, type, input } = event.state;
      execution.openStates.set(`${event.index ?? ''}/${name}`, type);
      addEvent(
        execution,
        `${type}StateEntered`,
        at,
        { name, input: json(input), inputDetails: DATA_DETAILS },
        'stateEnteredEventDetails',
      );
      if (type === 'Map') addEvent(execution, 'MapStateStarted', at);
      if (type === 'Parallel') addEvent(execution, 'ParallelStateStarted', at);
      return;
    }
    case 'StateExited': {
      const { name, type, output } = event.state;
      execution.openStates.delete(`${event.index ?? ''}/${name}`);
      if (type === 'Task') recordInvocation(execution, name);
      if (type === 'Map') addEvent(execution, 'MapStateSucceeded', at);
      if (type === 'Parallel') addEvent(execution, 'ParallelStateSucceeded', at);
      addEvent(
        execution,
        `${type}StateExited`,
        at,
        { name, output: json(output), outputDetails: DATA_DETAILS },
        'stateExitedEventDetails',
      );
      return;
    }
    case 'StateFailed': {
      const { name, type } = event.state;
      if (type === 'Task') recordInvocation(execution, name, event);
      if (type === 'Map') addEvent(execution, 'MapStateFailed', at);
      if (type === 'Parallel') addEvent(execution, 'ParallelStateFailed', at);
      return;
    }
    case 'MapIterationStarted':
    case 'MapIterationSucceeded':
    case 'MapIterationFailed':
      addEvent(execution, event.type, at, { name: event.parentState.name, index: event.index });
      return;
    default:
      // StateRetried and StateCaught show in AWS only through the Lambda events around them;
      // Parallel branches have no events of their own.
      return;
  }
}
