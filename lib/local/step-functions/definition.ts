/**
 * Loading a state machine: reads the `.asl.json` file, substitutes `${Placeholder}`s (Lambda tasks
 * become local Lambda ARNs routed to in-process functions), and refuses any definition that
 * aws-local-stepfunctions could not run as AWS does (JSONata, `Assign`, Task resources other than
 * Lambda). Task resources run locally: a bare `${...FunctionArn}`, and
 * `arn:aws:states:::lambda:invoke` / `arn:aws:states:::lambda:invoke.waitForTaskToken` with
 * `Parameters.FunctionName` a `${...FunctionArn}` (see lambda-integration.ts).
 */
import { readFile } from 'node:fs/promises';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { captureTimeoutClass, HEARTBEAT_TIMEOUT } from './task-failures.ts';
import { LIBRARY_TIMER_SECONDS } from './task-tokens.ts';

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

/**
 * AWS puts no timeout on a Task state without TimeoutSeconds (the Lambda function's own timeout,
 * at most 15 minutes, applies); aws-local-stepfunctions would fail it with States.Timeout after 60 s.
 */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
const PLACEHOLDER = /\$\{([^}]*)\}/g;
// AWS: 1-80 characters; no whitespace, brackets, wildcards, these specials, or control characters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
export const INVALID_NAME_CHARACTER = /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/;

interface AslBranch {
  QueryLanguage?: string;
  States?: Record<string, AslState>;
}
interface AslCatcher {
  ErrorEquals?: string[];
  Assign?: unknown;
}
interface AslState {
  Type?: string;
  Resource?: string;
  Parameters?: unknown;
  InputPath?: string | null;
  TimeoutSeconds?: number;
  TimeoutSecondsPath?: string;
  HeartbeatSeconds?: number;
  HeartbeatSecondsPath?: string;
  Retry?: AslCatcher[];
  QueryLanguage?: string;
  Assign?: unknown;
  Branches?: AslBranch[];
  ItemProcessor?: AslBranch;
  Iterator?: AslBranch;
  Choices?: { Assign?: unknown }[];
  Catch?: AslCatcher[];
}

/** How a Task state calls its function. */
export interface TaskRoute {
  /** The function's local Lambda ARN. */
  resource: string;
  run: LocalTask;
  /** Absent for a bare Lambda ARN resource; set for `arn:aws:states:::lambda:invoke[.waitForTaskToken]`. */
  integration?: LambdaIntegration;
}

export interface LambdaIntegration {
  /** The resource as Task* history events name it. */
  resource: 'invoke' | 'invoke.waitForTaskToken';
  /** Static limits; `…SecondsPath` values arrive in the resolved Parameters under the keys below. */
  timeoutSeconds?: number;
  heartbeatSeconds?: number;
}

/**
 * TimeoutSecondsPath and HeartbeatSecondsPath of service integration tasks are evaluated by the
 * library as extra Parameters entries (`<key>.$`), since it evaluates nothing else against the
 * state input for a Task; the task strips them before anything else sees the Parameters.
 */
export const TIMEOUT_PATH_PARAMETER = 'local:TimeoutSecondsPath';
export const HEARTBEAT_PATH_PARAMETER = 'local:HeartbeatSecondsPath';
export const TASK_TOKEN_PATH = '$$.Task.Token';
const INTEGRATIONS = new Map<string, LambdaIntegration['resource']>([
  ['arn:aws:states:::lambda:invoke', 'invoke'],
  ['arn:aws:states:::lambda:invoke.waitForTaskToken', 'invoke.waitForTaskToken'],
]);
const SUPPORTED_RESOURCES =
  `a bare '\${...FunctionArn}' placeholder, or 'arn:aws:states:::lambda:invoke' / ` +
  `'arn:aws:states:::lambda:invoke.waitForTaskToken' with Parameters.FunctionName '\${...FunctionArn}'`;

export interface LoadedMachine {
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

/** Whether a Parameters template reads `$$.Task.Token` (in a path or an intrinsic function). */
function readsTaskToken(template: unknown): boolean {
  if (Array.isArray(template)) return template.some(readsTaskToken);
  if (typeof template !== 'object' || template === null) return false;
  return Object.entries(template).some(([key, value]) =>
    key.endsWith('.$') && typeof value === 'string' ? value.includes(TASK_TOKEN_PATH) : readsTaskToken(value),
  );
}

/** The state's own fields (not its nested states') mention `$$.Task.Token` outside Parameters. */
function mentionsTaskTokenOutsideParameters(state: AslState): boolean {
  const {
    Parameters: _parameters,
    Branches: _branches,
    ItemProcessor: _processor,
    Iterator: _iterator,
    ...own
  } = state;
  return JSON.stringify(own).includes(TASK_TOKEN_PATH);
}

/** `$$.Task.Token` exists only while a `.waitForTaskToken` task builds its Parameters. */
function refuseTaskTokenUse(where: string, stateName: string, state: AslState, callback: boolean) {
  if (!callback && readsTaskToken(state.Parameters)) {
    throw new Error(
      `${where}: state '${stateName}' reads ${TASK_TOKEN_PATH}, which exists only in '.waitForTaskToken' tasks`,
    );
  }
  if (mentionsTaskTokenOutsideParameters(state)) {
    throw new Error(`${where}: state '${stateName}' reads ${TASK_TOKEN_PATH} outside Parameters`);
  }
}

/** In AWS `States.Timeout` also matches `States.HeartbeatTimeout`; the library matches names exactly. */
function matchHeartbeatTimeouts(state: AslState) {
  for (const rule of [...(state.Retry ?? []), ...(state.Catch ?? [])]) {
    const names = rule.ErrorEquals;
    if (names?.includes('States.Timeout') && !names.includes(HEARTBEAT_TIMEOUT))
      names.push(HEARTBEAT_TIMEOUT);
  }
}

/**
 * Checks a `lambda:invoke[.waitForTaskToken]` Task and rewrites the library's copy: its clocks are
 * kept here (and the paths moved into Parameters), the library gets a timeout it cannot reach first.
 */
function lambdaIntegration(
  where: string,
  stateName: string,
  state: AslState,
  resource: LambdaIntegration['resource'],
): { functionArn: string; integration: LambdaIntegration } {
  const task = `${where}: Task state '${stateName}' (${state.Resource})`;
  const parameters = state.Parameters;
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
    throw new Error(`${task} needs Parameters with FunctionName and Payload`);
  }
  const template = parameters as Record<string, unknown>;
  const unsupported = Object.keys(template).filter(
    (key) => key !== 'FunctionName' && key !== 'Payload' && key !== 'Payload.$',
  );
  if (unsupported.length > 0) {
    throw new Error(
      `${task}: Parameters ${unsupported.join(', ')} are not supported locally; use FunctionName and Payload`,
    );
  }
  const functionArn = template.FunctionName;
  if (typeof functionArn !== 'string') {
    throw new Error(`${task}: Parameters.FunctionName must be a '\${...FunctionArn}' placeholder`);
  }
  if (resource === 'invoke.waitForTaskToken' && !readsTaskToken(template)) {
    throw new Error(
      `${task}: its Parameters never pass ${TASK_TOKEN_PATH}, so nothing could ever resume it (AWS would wait until TimeoutSeconds)`,
    );
  }
  for (const path of ['TimeoutSecondsPath', 'HeartbeatSecondsPath'] as const) {
    if (state[path] !== undefined && state.InputPath !== undefined) {
      throw new Error(`${task}: ${path} together with InputPath is not supported locally`);
    }
  }
  const { TimeoutSeconds: timeoutSeconds, HeartbeatSeconds: heartbeatSeconds } = state;
  if (timeoutSeconds !== undefined && heartbeatSeconds !== undefined && heartbeatSeconds >= timeoutSeconds) {
    throw new Error(`${task}: HeartbeatSeconds must be smaller than TimeoutSeconds`);
  }
  const integration: LambdaIntegration = {
    resource,
    timeoutSeconds,
    heartbeatSeconds,
  };
  if (state.TimeoutSecondsPath !== undefined)
    template[`${TIMEOUT_PATH_PARAMETER}.$`] = state.TimeoutSecondsPath;
  if (state.HeartbeatSecondsPath !== undefined) {
    template[`${HEARTBEAT_PATH_PARAMETER}.$`] = state.HeartbeatSecondsPath;
  }
  delete state.TimeoutSecondsPath;
  delete state.HeartbeatSeconds;
  delete state.HeartbeatSecondsPath;
  state.TimeoutSeconds = LIBRARY_TIMER_SECONDS;
  matchHeartbeatTimeouts(state);
  return { functionArn, integration };
}

/** The ARN a `${Placeholder}` stands for locally: `DetectFunctionArn` → `function:Detect`. */
function localLambdaArn(region: string, accountId: string, placeholder: string): string {
  return `arn:aws:lambda:${region}:${accountId}:function:${placeholder.replace(/Arn$/, '') || placeholder}`;
}
export async function loadMachine(
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
    if (state.Type !== 'Task') {
      refuseTaskTokenUse(where, stateName, state, false);
      continue;
    }
    const resource = state.Resource ?? '';
    const integrationResource = INTEGRATIONS.get(resource);
    let functionArn = resource;
    let integration: LambdaIntegration | undefined;
    if (integrationResource) {
      ({ functionArn, integration } = lambdaIntegration(where, stateName, state, integrationResource));
    }
    const placeholder = taskByArn.get(functionArn);
    const run = placeholder === undefined ? undefined : machine.tasks[placeholder];
    if (!run) {
      throw new Error(
        integration
          ? `${where}: Task state '${stateName}' calls FunctionName '${functionArn}'; only '\${...}' Lambda placeholders routed through 'tasks' run locally`
          : `${where}: Task state '${stateName}' has Resource '${resource}', which does not run locally; supported: ${SUPPORTED_RESOURCES}`,
      );
    }
    const known = tasks.get(stateName);
    // Handlers are keyed by state name, so same-named states (in different branches) must be one task.
    if (
      known &&
      (known.resource !== functionArn || JSON.stringify(known.integration) !== JSON.stringify(integration))
    ) {
      throw new Error(`${where}: two Task states are named '${stateName}' with different resources`);
    }
    refuseTaskTokenUse(where, stateName, state, integration?.resource === 'invoke.waitForTaskToken');
    tasks.set(stateName, { resource: functionArn, run, integration });
    if (state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) {
      state.TimeoutSeconds = LAMBDA_MAX_TIMEOUT_SECONDS;
    }
  }

  let stateMachine: StateMachine;
  if ([...tasks.values()].some((route) => route.integration)) await captureTimeoutClass();
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
