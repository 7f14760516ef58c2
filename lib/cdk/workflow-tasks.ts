/**
 * The import workflow's Task functions: the one list the CDK construct (one function each, its
 * ARN substituted for `${<name>FunctionArn}` in `statemachines/import.asl.json`), the worker image's
 * bundle script and the local runner share. Plain data, so the Docker build stage can import it
 * without loading aws-cdk-lib.
 *
 * - `image`: the step runs `git`, `git-lfs` and `git-filter-repo` on the shared file system, so it
 *   is a container-image function in the VPC with EFS mounted.
 * - `zip`: the step only reads and writes the table; an ordinary bundled function outside the VPC.
 */
export const WORKFLOW_TASKS = [
  { name: 'Detect', handler: 'detect', packaging: 'image' },
  { name: 'ImportRawHistory', handler: 'import-raw-history', packaging: 'image' },
  { name: 'RewriteHistory', handler: 'rewrite-history', packaging: 'image' },
  { name: 'Push', handler: 'push', packaging: 'image' },
  { name: 'WaitForPerson', handler: 'wait-for-person', packaging: 'zip' },
  { name: 'Complete', handler: 'complete', packaging: 'zip' },
  { name: 'RecordFailure', handler: 'record-failure', packaging: 'zip' },
  { name: 'ContinueInNewExecution', handler: 'continue-in-new-execution', packaging: 'zip' },
] as const satisfies readonly WorkflowTask[];

/**
 * The sync scheduler (issue 27), beside the workflow's tasks: a rule invokes it, not the state
 * machine, but it lives in the worker image because its origin check runs `git` (as `Detect` does).
 */
export const SYNC_SCHEDULER = {
  name: 'SyncScheduler',
  handler: 'start-due-syncs',
  packaging: 'image',
} as const;

/**
 * The webhook delivery function (issue 28), beside the workflow's tasks: the API and the tasks
 * invoke it asynchronously, one delivery job per invocation. A zip function outside the VPC (it
 * posts to receivers on the internet, never git). `retries`: Lambda's asynchronous retries of a
 * failed delivery before the job goes to the dead-letter queue (the local stand-in keeps them too).
 */
export const WEBHOOK_DELIVERY = {
  name: 'WebhookDelivery',
  handler: 'deliver-webhook',
  packaging: 'zip',
  retries: 2,
  description: 'Delivers one webhook event to its receiver',
} as const;

export interface WorkflowTask {
  /** The state's story name; the placeholder is `${<name>FunctionArn}`. */
  readonly name: string;
  /** Module under `functions/workflow/`, without extension; it exports `handler`. */
  readonly handler: string;
  readonly packaging: 'image' | 'zip';
}

export type WorkflowTaskName = (typeof WORKFLOW_TASKS)[number]['name'];

/** `Detect` → `DetectFunctionArn`, the ASL placeholder (without `${}`). */
export const placeholderOf = (name: string): string => `${name}FunctionArn`;

/** Every `${Name}` in an ASL file, each once, in order of first use. */
export function placeholdersIn(definition: string): string[] {
  return [...new Set([...definition.matchAll(/\$\{([^}]+)\}/g)].map((match) => match[1] ?? ''))];
}
