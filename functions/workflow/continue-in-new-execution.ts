import { continueInNewExecution } from '#services/import-continuation';
import { workflowTask } from './task.ts';

/** The `ContinueInNewExecution` state of statemachines/import.asl.json. */
export const handler = workflowTask('continue-in-new-execution', continueInNewExecution);
