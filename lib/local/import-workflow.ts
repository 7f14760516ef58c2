/**
 * The import workflow on this machine: the very ASL file CDK deploys, with each task placeholder
 * routed to the real task handler in this process (loaded like the HTTP server loads route
 * handlers), running against DynamoDB Local and the machine's git.
 */
import { fileURLToPath } from 'node:url';
import { IMPORT_STATE_MACHINE_NAME, IMPORT_WORKFLOW_TASKS } from '#shared/workflow-tasks';
import type { LocalStateMachine, LocalTask } from './step-functions.ts';

export const IMPORT_ASL_FILE = fileURLToPath(new URL('../../statemachines/import.asl.json', import.meta.url));
const TASKS_DIR = new URL('../../functions/workflow/', import.meta.url);

export async function importStateMachine(): Promise<LocalStateMachine> {
  const tasks: Record<string, LocalTask> = {};
  for (const task of IMPORT_WORKFLOW_TASKS) {
    const module = (await import(new URL(`${task.handler}.ts`, TASKS_DIR).href)) as {
      handler?: (input: never) => Promise<unknown>;
    };
    const { handler } = module;
    if (typeof handler !== 'function')
      throw new Error(`functions/workflow/${task.handler}.ts exports no handler`);
    tasks[task.placeholder] = (input) => handler(input as never);
  }
  return { name: IMPORT_STATE_MACHINE_NAME, definitionFile: IMPORT_ASL_FILE, tasks };
}
