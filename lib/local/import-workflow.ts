/**
 * The import workflow on this machine: the very ASL file CDK deploys, with each task placeholder
 * routed to the real task handler in this process (loaded like the HTTP server loads route
 * handlers), running against DynamoDB Local and the machine's git, where AWS would have it.
 */
import { fileURLToPath } from 'node:url';
import { placeholderOf, WORKFLOW_TASKS } from '#cdk/workflow-tasks';
import type { ConcurrencyLimit } from './lambda-concurrency.ts';
import type { LocalStateMachine, LocalTask } from './step-functions.ts';
import { asImageFunction, asZipFunction } from './zip-runtime.ts';

export const IMPORT_ASL_FILE = fileURLToPath(new URL('../../statemachines/import.asl.json', import.meta.url));
const TASKS_DIR = new URL('../../functions/workflow/', import.meta.url);
/** The state machine's name here (in AWS: `<stack>-SourceImport`). */
export const LOCAL_IMPORT_STATE_MACHINE = 'SourceImport';

/**
 * The import workflow with every task in this process, or, for the placeholders `given` names,
 * as the caller runs them (the as-deployed tests: each function's deployed code in its sandbox).
 */
export async function importStateMachine(
  given: Readonly<Record<string, LocalTask>> = {},
  options: {
    /** Lambda's concurrency limit over the workflow's functions (`lambda-concurrency.ts`); none by default. */
    readonly concurrency?: ConcurrencyLimit;
  } = {},
): Promise<LocalStateMachine> {
  const tasks: Record<string, LocalTask> = { ...given };
  for (const task of WORKFLOW_TASKS) {
    if (tasks[placeholderOf(task.name)]) continue;
    const module = (await import(new URL(`${task.handler}.ts`, TASKS_DIR).href)) as {
      handler?: (input: never) => Promise<unknown>;
    };
    const { handler } = module;
    if (typeof handler !== 'function')
      throw new Error(`functions/workflow/${task.handler}.ts exports no handler`);
    // Each task where AWS runs it: a zip function without git, or the worker image with it.
    const runtime = task.packaging === 'image' ? asImageFunction : asZipFunction;
    tasks[placeholderOf(task.name)] = (input) => runtime(() => handler(input as never));
  }
  const { concurrency } = options;
  if (concurrency) {
    for (const [placeholder, task] of Object.entries(tasks))
      tasks[placeholder] = (input) => concurrency.run(() => task(input));
  }
  return { name: LOCAL_IMPORT_STATE_MACHINE, definitionFile: IMPORT_ASL_FILE, tasks };
}
