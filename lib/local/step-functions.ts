/**
 * A local Step Functions endpoint: a loopback HTTP server speaking the AWS JSON 1.0 subset our
 * handlers use (StartExecution, StopExecution, DescribeExecution, GetExecutionHistory), executing
 * the project's own `.asl.json` files with aws-local-stepfunctions. Handlers keep their production
 * `SFNClient` and only point its `endpoint` here (ENV.stepFunctionsEndpoint).
 *
 * Contracts kept from AWS, because the calling code depends on them:
 * - ARNs: `arn:aws:states:<region>:<account>:stateMachine:<name>` and `...:execution:<name>:<execution>`.
 * - Errors: status 400 with `{"__type": "<ShapeName>", "message"}`, which the SDK turns into its
 *   named exception classes (ExecutionDoesNotExist, ExecutionAlreadyExists, InvalidName, ...).
 * - StartExecution is idempotent only while the execution with that name runs and the input is the
 *   same string; any other reuse of a name is ExecutionAlreadyExists.
 * - `${FooFunctionArn}` Task resources are bare Lambda ARNs: a task function that throws surfaces
 *   as Lambda's Node.js runtime reports it, Error = `error.name` (so Retry/Catch `ErrorEquals` match
 *   the name, not the class) and Cause = `{"errorType","errorMessage","trace"}` as a JSON string.
 *   The history uses the LambdaFunction* events AWS writes for such resources.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  StateMachine,
  type StateMachineDefinition,
} from 'aws-local-stepfunctions';

// aws-local-stepfunctions 3 declares Node 22 and calls Promise.withResolvers (ES2024) in every Task
// state. It only calls it while running, so defining it when this module loads is early enough.
const promiseStatics = Promise as unknown as { withResolvers?: unknown };
if (!promiseStatics.withResolvers) {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>() {
      let resolve: (value: T | PromiseLike<T>) => void = () => {};
      let reject: (reason?: unknown) => void = () => {};
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

/** A Lambda function run in-process: receives the Task's effective input, returns its result. */
export type LocalTask = (input: unknown) => Promise<unknown>;

export interface LocalStateMachine {
  /** The state machine's name, the last part of its ARN. */
  name: string;
  /** Absolute path to the `.asl.json` file, the same file CDK deploys. */
  definitionFile: string;
  /** Values for `${Placeholder}`s that are not Lambda functions (table names, ...). */
  substitutions?: Record<string, string>;
  /** One local function per Lambda placeholder, keyed by placeholder name (`DetectFunctionArn`). */
  tasks: Record<string, LocalTask>;
}

export interface StepFunctionsLocalOptions {
  machines: LocalStateMachine[];
  /** 0 (the default) picks a free port. */
  port?: number;
  region?: string;
  accountId?: string;
}

export interface StepFunctionsLocal {
  /** `http://127.0.0.1:<port>`, for `new SFNClient({ endpoint })`. */
  endpoint: string;
  stateMachineArn(name: string): string;
  /** Aborts running executions and closes the server. */
  stop(): Promise<void>;
}

type JSONValue = Parameters<StateMachine['run']>[0];
type RunOptions = NonNullable<Parameters<StateMachine['run']>[1]>;
type TaskHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;
type LibraryEvent = ReturnType<StateMachine['run']>['eventLogs'] extends AsyncGenerator<infer E> ? E : never;
type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED' | 'TIMED_OUT';

/** AWS's payload quota for execution input, state input/output and task results. */
const MAX_PAYLOAD_BYTES = 256 * 1024;
/**
 * AWS puts no timeout on a Task state without TimeoutSeconds (the Lambda function's own timeout,
 * at most 15 minutes, applies); aws-local-stepfunctions would fail it with States.Timeout after 60 s.
 */
const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
const PLACEHOLDER = /\$\{([^}]*)\}/g;
// AWS: 1-80 characters; no whitespace, brackets, wildcards, these specials, or control characters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
const INVALID_NAME_CHARACTER = /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/;
const STATE_MACHINE_ARN = /^arn:aws[\w-]*:states:[\w-]+:\d{12}:stateMachine:[^:]+$/;
const EXECUTION_ARN = /^arn:aws[\w-]*:states:[\w-]+:\d{12}:execution:[^:]+:[^:]+$/;

// ---------------------------------------------------------------------------------------------
// Loading definitions

interface AslBranch {
  QueryLanguage?: string;
  States?: Record<string, AslState>;
}
interface AslState {
  Type?: string;
  Resource?: string;
  TimeoutSeconds?: number;
  TimeoutSecondsPath?: string;
  QueryLanguage?: string;
  Assign?: unknown;
  Branches?: AslBranch[];
  ItemProcessor?: AslBranch;
  Iterator?: AslBranch;
  Choices?: { Assign?: unknown }[];
  Catch?: { Assign?: unknown }[];
}

interface TaskRoute {
  resource: string;
  run: LocalTask;
}

interface LoadedMachine {
  name: string;
  arn: string;
  roleArn: string;
  stateMachine: StateMachine;
  /** Task state name (unique across branches and iterators) → its Lambda ARN and local function. */
  tasks: Map<string, TaskRoute>;
}

function* walkStates(branch: AslBranch): Generator<[string, AslState]> {
  for (const [name, state] of Object.entries(branch.States ?? {})) {
    yield [name, state];
    for (const nested of state.Branches ?? []) yield* walkStates(nested);
    const processor = state.ItemProcessor ?? state.Iterator;
    if (processor) yield* walkStates(processor);
  }
}

/** The ARN a `${Placeholder}` stands for locally: `DetectFunctionArn` → `function:Detect`. */
function localLambdaArn(region: string, accountId: string, placeholder: string): string {
  return `arn:aws:lambda:${region}:${accountId}:function:${placeholder.replace(/Arn$/, '') || placeholder}`;
}

async function loadMachine(
  machine: LocalStateMachine,
  region: string,
  accountId: string,
): Promise<LoadedMachine> {
  const where = `State machine '${machine.name}' (${machine.definitionFile})`;
  if (INVALID_NAME_CHARACTER.test(machine.name) || machine.name.length === 0 || machine.name.length > 80) {
    throw new Error(`${where}: invalid state machine name`);
  }
  const source = await readFile(machine.definitionFile, 'utf8');

  const values = new Map(Object.entries(machine.substitutions ?? {}));
  const taskByArn = new Map<string, string>();
  for (const placeholder of Object.keys(machine.tasks)) {
    if (values.has(placeholder))
      throw new Error(`${where}: '${placeholder}' is both a substitution and a task`);
    const arn = localLambdaArn(region, accountId, placeholder);
    values.set(placeholder, arn);
    taskByArn.set(arn, placeholder);
  }
  const present = new Set([...source.matchAll(PLACEHOLDER)].map((match) => match[1] ?? ''));
  const missing = [...present].filter((key) => !values.has(key));
  if (missing.length > 0) {
    const list = missing.map((key) => `\${${key}}`).join(', ');
    throw new Error(
      `${where}: no value for ${list}; pass Lambda functions in 'tasks', other values in 'substitutions'`,
    );
  }
  const unused = Object.keys(machine.tasks).filter((key) => !present.has(key));
  if (unused.length > 0) throw new Error(`${where}: tasks ${unused.join(', ')} have no \${...} placeholder`);

  // Values are JSON-escaped; CDK's definitionSubstitutions pastes them raw, which is equal for ARNs and names.
  const substituted = source.replace(PLACEHOLDER, (_match, key: string) =>
    JSON.stringify(values.get(key) ?? '').slice(1, -1),
  );
  let definition: AslBranch;
  try {
    definition = JSON.parse(substituted) as AslBranch;
  } catch (error) {
    throw new Error(`${where}: not valid JSON after substitution: ${(error as Error).message}`);
  }

  // aws-local-stepfunctions silently ignores JSONata and variables; running such a file locally
  // would differ from AWS without a trace, so refuse it.
  if (definition.QueryLanguage === 'JSONata')
    throw new Error(`${where}: JSONata is not supported locally; use JSONPath`);
  const tasks = new Map<string, TaskRoute>();
  for (const [stateName, state] of walkStates(definition)) {
    if (state.QueryLanguage === 'JSONata') {
      throw new Error(`${where}: state '${stateName}' uses JSONata, which is not supported locally`);
    }
    const assigns = [state, ...(state.Choices ?? []), ...(state.Catch ?? [])].some(
      (node) => node.Assign !== undefined,
    );
    if (assigns)
      throw new Error(`${where}: state '${stateName}' uses Assign, which is not supported locally`);
    if (state.Type !== 'Task') continue;
    const resource = state.Resource ?? '';
    const placeholder = taskByArn.get(resource);
    const run = placeholder === undefined ? undefined : machine.tasks[placeholder];
    if (!run) {
      throw new Error(
        `${where}: Task state '${stateName}' has Resource '${resource}'; only '\${...}' Lambda placeholders routed through 'tasks' run locally`,
      );
    }
    const known = tasks.get(stateName);
    if (known && known.resource !== resource) {
      throw new Error(`${where}: two Task states are named '${stateName}' with different resources`);
    }
    tasks.set(stateName, { resource, run });
    if (state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) {
      state.TimeoutSeconds = LAMBDA_MAX_TIMEOUT_SECONDS;
    }
  }

  let stateMachine: StateMachine;
  try {
    stateMachine = new StateMachine(definition as StateMachineDefinition);
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`);
  }
  return {
    name: machine.name,
    arn: `arn:aws:states:${region}:${accountId}:stateMachine:${machine.name}`,
    roleArn: `arn:aws:iam::${accountId}:role/${machine.name}-role`,
    stateMachine,
    tasks,
  };
}

// ---------------------------------------------------------------------------------------------
// Task functions as Lambda invocations

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

/** One call of a task function, kept until the history records it. */
interface Invocation {
  stateName: string;
  resource: string;
  input: string;
  scheduledAt: number;
  settledAt?: number;
  outcome?: { succeeded: true; output: string } | { succeeded: false; error: string; cause: string };
}

// ---------------------------------------------------------------------------------------------
// Executions and their history

interface HistoryEvent {
  timestamp: number;
  type: string;
  detailsKey?: string;
  details?: Record<string, unknown>;
}

interface Execution {
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
  abort(): void;
  done: Promise<void>;
}

/** What AWS reports for an execution that ran past its top-level TimeoutSeconds. */
const EXECUTION_TIMED_OUT = {
  error: 'States.Timeout',
  cause: 'The execution ran longer than its TimeoutSeconds.',
};
const ABORTABLE_STATE_TYPES = new Set(['Task', 'Wait', 'Map', 'Parallel']);
const DATA_DETAILS = { truncated: false };

function finish(
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
function json(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** An error cause: the library gives strings, or objects for its own nested errors. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : json(value);
}

function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
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

/** Maps aws-local-stepfunctions' event log onto Step Functions history event types. */
function recordEvent(execution: Execution, event: LibraryEvent) {
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

// ---------------------------------------------------------------------------------------------
// The API

/** A Step Functions API error: `type` is the SDK's exception class name. */
class ApiError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

type Params = Record<string, unknown>;

function requiredString(params: Params, member: string): string {
  const value = params[member];
  if (typeof value !== 'string') {
    throw new ApiError(
      'ValidationException',
      `1 validation error detected: Value null at '${member}' failed to satisfy constraint: Member must not be null`,
    );
  }
  return value;
}

function optionalString(params: Params, member: string, maxLength: number): string | undefined {
  const value = params[member];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length > maxLength) {
    throw new ApiError(
      'ValidationException',
      `Value at '${member}' failed to satisfy constraint: Member must be a string of at most ${maxLength} characters`,
    );
  }
  return value;
}

function seconds(ms: number): number {
  return ms / 1000;
}

export async function startStepFunctionsLocal(
  options: StepFunctionsLocalOptions,
): Promise<StepFunctionsLocal> {
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '123456789012';
  const machines = new Map<string, LoadedMachine>();
  for (const machine of options.machines) {
    if ([...machines.values()].some((known) => known.name === machine.name)) {
      throw new Error(`State machine '${machine.name}' is defined twice`);
    }
    const loaded = await loadMachine(machine, region, accountId);
    machines.set(loaded.arn, loaded);
  }
  const executions = new Map<string, Execution>();

  function findExecution(params: Params): Execution {
    const arn = requiredString(params, 'executionArn');
    const execution = executions.get(arn);
    if (execution) return execution;
    if (!EXECUTION_ARN.test(arn)) throw new ApiError('InvalidArn', `Invalid Arn: '${arn}'`);
    throw new ApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
  }

  async function invoke(
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

  function run(machine: LoadedMachine, name: string, input: string): Execution {
    const arn = `arn:aws:states:${region}:${accountId}:execution:${machine.name}:${name}`;
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
      handlers[stateName] = (taskInput) => invoke(execution, stateName, route, taskInput);
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
    executions.set(arn, execution);
    return execution;
  }

  function stopExecution(execution: Execution, error?: string, cause?: string) {
    finish(execution, 'ABORTED', { error, cause });
    execution.abort();
  }

  const operations: Record<string, (params: Params) => unknown> = {
    StartExecution(params) {
      const stateMachineArn = requiredString(params, 'stateMachineArn');
      const machine = machines.get(stateMachineArn);
      if (!machine) {
        if (!STATE_MACHINE_ARN.test(stateMachineArn))
          throw new ApiError('InvalidArn', `Invalid Arn: '${stateMachineArn}'`);
        throw new ApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${stateMachineArn}'`);
      }
      const name = optionalString(params, 'name', Number.MAX_SAFE_INTEGER) ?? randomUUID();
      if (name.length === 0 || name.length > 80 || INVALID_NAME_CHARACTER.test(name)) {
        throw new ApiError('InvalidName', `Invalid Name: '${name}'`);
      }
      const input = optionalString(params, 'input', Number.MAX_SAFE_INTEGER) ?? '{}';
      try {
        JSON.parse(input);
      } catch {
        throw new ApiError('InvalidExecutionInput', `Invalid State Machine Execution Input: '${input}'`);
      }
      if (Buffer.byteLength(input) > MAX_PAYLOAD_BYTES) {
        throw new ApiError(
          'InvalidExecutionInput',
          'Execution input exceeds the maximum size of 262144 bytes',
        );
      }
      const existing = executions.get(
        `arn:aws:states:${region}:${accountId}:execution:${machine.name}:${name}`,
      );
      if (existing) {
        if (existing.status !== 'RUNNING' || existing.input !== input) {
          throw new ApiError('ExecutionAlreadyExists', `Execution Already Exists: '${existing.arn}'`);
        }
        return { executionArn: existing.arn, startDate: seconds(existing.startDate) };
      }
      const execution = run(machine, name, input);
      return { executionArn: execution.arn, startDate: seconds(execution.startDate) };
    },

    StopExecution(params) {
      const execution = findExecution(params);
      const error = optionalString(params, 'error', 256);
      const cause = optionalString(params, 'cause', 32768);
      stopExecution(execution, error, cause);
      return { stopDate: seconds(execution.stopDate ?? Date.now()) };
    },

    DescribeExecution(params) {
      const execution = findExecution(params);
      return withoutUndefined({
        executionArn: execution.arn,
        stateMachineArn: execution.machine.arn,
        name: execution.name,
        status: execution.status,
        startDate: seconds(execution.startDate),
        stopDate: execution.stopDate === undefined ? undefined : seconds(execution.stopDate),
        input: execution.input,
        inputDetails: { included: true },
        output: execution.output,
        outputDetails: execution.output === undefined ? undefined : { included: true },
        error: execution.error,
        cause: execution.cause,
        redriveCount: 0,
        redriveStatus: 'NOT_REDRIVABLE',
      });
    },

    GetExecutionHistory(params) {
      const execution = findExecution(params);
      const maxResults =
        typeof params.maxResults === 'number' && params.maxResults > 0 ? params.maxResults : 100;
      if (maxResults > 1000) throw new ApiError('ValidationException', 'maxResults must be at most 1000');
      const token = params.nextToken;
      const offset = token === undefined || token === null ? 0 : Number(token);
      if (!Number.isInteger(offset) || offset < 0)
        throw new ApiError('InvalidToken', `Invalid Token: '${String(token)}'`);
      const includeData = params.includeExecutionData !== false;
      const numbered = execution.history.map((event, index) => ({ event, id: index + 1 }));
      const ordered = params.reverseOrder === true ? numbered.reverse() : numbered;
      const page = ordered.slice(offset, offset + maxResults);
      const events = page.map(({ event, id }) => {
        let details = event.details;
        if (details && !includeData) {
          const { input: _input, output: _output, ...rest } = details;
          details = rest;
        }
        return {
          id,
          previousEventId: id - 1,
          timestamp: seconds(event.timestamp),
          type: event.type,
          ...(event.detailsKey ? { [event.detailsKey]: details } : {}),
        };
      });
      return withoutUndefined({
        events,
        nextToken: offset + maxResults < ordered.length ? String(offset + maxResults) : undefined,
      });
    },
  };

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': randomUUID(),
      });
      response.end(JSON.stringify(body));
    };
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const target = request.headers['x-amz-target'];
      const operationName = typeof target === 'string' ? target.replace(/^AWSStepFunctions\./, '') : '';
      const operation =
        request.method === 'POST' && target !== operationName ? operations[operationName] : undefined;
      if (!operation) throw new ApiError('UnknownOperationException', `Unknown operation: ${String(target)}`);
      let params: unknown;
      try {
        const body = Buffer.concat(chunks).toString('utf8');
        params = body === '' ? {} : JSON.parse(body);
      } catch {
        throw new ApiError('SerializationException', 'The request body is not valid JSON');
      }
      if (typeof params !== 'object' || params === null || Array.isArray(params)) {
        throw new ApiError('SerializationException', 'The request body must be a JSON object');
      }
      send(200, operation(params as Params));
    } catch (error) {
      if (error instanceof ApiError) send(400, { __type: error.type, message: error.message });
      else send(500, { __type: 'InternalFailure', message: String(error) });
    }
  }

  const server: Server = createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stateMachineArn(name) {
      const machine = [...machines.values()].find((known) => known.name === name);
      if (!machine) throw new Error(`No local state machine named '${name}'`);
      return machine.arn;
    },
    stop() {
      stopped ??= (async () => {
        for (const execution of executions.values()) {
          if (execution.status === 'RUNNING') stopExecution(execution);
        }
        await Promise.allSettled([...executions.values()].map((execution) => execution.done));
        await new Promise<void>((resolve, reject) => {
          server.close((error) => (error ? reject(error) : resolve()));
          server.closeAllConnections();
        });
      })();
      return stopped;
    },
  };
}
