import { push } from '#services/import-worker';
import { workflowTask } from './task.ts';

/** The `Push` state of statemachines/import.asl.json. */
export const handler = workflowTask('push', push);
