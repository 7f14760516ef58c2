import { waitForPerson } from '#services/import-worker';
import { workflowTask } from './task.ts';

/** The waiting states (`.waitForTaskToken`: DetectionNeedsAuth, DetectionFoundMultiple, AuthFailed, WaitForLfsChoice) of statemachines/import.asl.json. */
export const handler = workflowTask('wait-for-person', waitForPerson);
