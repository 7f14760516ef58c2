import { rewrite } from '#services/import-worker';
import { workflowTask } from './task.ts';

/** The `RewriteHistory` state of statemachines/import.asl.json. */
export const handler = workflowTask('rewrite-history', rewrite);
