/**
 * The import workflow's task functions: the one list that CDK builds functions from, the local
 * Step Functions endpoint routes to, and the ASL lint test checks `statemachines/import.asl.json`
 * against (every `${…FunctionArn}` placeholder is a row here, and every row is used). Plain data.
 */
export interface WorkflowTask {
  /** The `${…}` placeholder in the ASL file. */
  readonly placeholder: string;
  /** Handler module under `functions/workflow/`, without extension. */
  readonly handler: string;
  /**
   * `git`: runs git and friends on the import's working files (a container image with the tools and
   * the file system mounted); `table`: reads and writes the table only (an ordinary bundled function).
   */
  readonly compute: 'git' | 'table';
  /** How the ASL uses it: a bare Lambda ARN `Resource`, or `lambda:invoke.waitForTaskToken`'s FunctionName. */
  readonly invocation: 'task' | 'wait-for-task-token';
}

// biome-ignore format: one line per task keeps the table readable
export const IMPORT_WORKFLOW_TASKS: readonly WorkflowTask[] = [
  { placeholder: 'DetectFunctionArn', handler: 'detect', compute: 'git', invocation: 'task' },
  { placeholder: 'ImportRawHistoryFunctionArn', handler: 'import-raw-history', compute: 'git', invocation: 'task' },
  { placeholder: 'RewriteHistoryFunctionArn', handler: 'rewrite-history', compute: 'git', invocation: 'task' },
  { placeholder: 'PushFunctionArn', handler: 'push', compute: 'git', invocation: 'task' },
  { placeholder: 'CompleteFunctionArn', handler: 'complete', compute: 'git', invocation: 'task' },
  { placeholder: 'RecordFailureFunctionArn', handler: 'record-failure', compute: 'table', invocation: 'task' },
  { placeholder: 'WaitForPersonFunctionArn', handler: 'wait-for-person', compute: 'table', invocation: 'wait-for-task-token' },
];

/** The import state machine's name (the last part of its ARN, and how the console lists it). */
export const IMPORT_STATE_MACHINE_NAME = 'SourceImport';
