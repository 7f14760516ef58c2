import { recordFailure } from '#services/import-worker';
import { workflowTask } from './task.ts';

/** The `Error` state of statemachines/import.asl.json. */
export const handler = workflowTask('record-failure', recordFailure);
