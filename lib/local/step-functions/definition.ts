/**
 * Loading a state machine: reads the `.asl.json` file, substitutes `${Placeholder}`s (Lambda tasks
 * become local Lambda ARNs routed to in-process functions), and refuses any definition that
 * aws-local-stepfunctions could not run as AWS does (JSONata, `Assign`, non-Lambda Task resources).
 */
import { readFile } from 'node:fs/promises';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';

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
const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
const PLACEHOLDER = /\$\{([^}]*)\}/g;
// AWS: 1-80 characters; no whitespace, brackets, wildcards, these specials, or control characters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
export const INVALID_NAME_CHARACTER = /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/;

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

export interface TaskRoute {
  resource: string;
  run: LocalTask;
}

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
