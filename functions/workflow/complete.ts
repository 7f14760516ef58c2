import { complete } from '#services/import-worker';
import { workflowTask } from './task.ts';

/** The `Complete` state of statemachines/import.asl.json. */
export const handler = workflowTask('complete', complete);
