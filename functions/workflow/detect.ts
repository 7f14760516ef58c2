import { detect } from '#services/import-worker';
import { workflowTask } from './task.ts';

/** The `Detect` state of statemachines/import.asl.json. */
export const handler = workflowTask('detect', detect);
