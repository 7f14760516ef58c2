import { importRawChunk } from '#services/import-worker';
import { workflowTask } from './task.ts';

/** The `ImportRawHistory` state of statemachines/import.asl.json. */
export const handler = workflowTask('import-raw-history', importRawChunk);
