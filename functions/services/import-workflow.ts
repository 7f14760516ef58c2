/**
 * Driving the import workflow (`statemachines/import.asl.json`) from the API: start an attempt,
 * stop it, and resume an execution paused at a `.waitForTaskToken` state. The execution carries
 * only the import's key and attempt, never credentials (they are sealed on the import item).
 */
import {
  DescribeExecutionCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { executionName, executionNameOf, type Import } from '#domain/imports';
import { awsClientSettings } from '#shared/aws-clients';
import { config, ENV } from '#shared/config';

/**
 * Where an attempt starts: detection, the raw import, or the rewrite (republishing a complete
 * import); a later part of an attempt (`part`) also at the push.
 */
export type StartAt = 'detect' | 'import' | 'rewrite' | 'push';

/** The execution input: the import's key and attempt, nothing secret. */
export interface ImportExecutionInput {
  readonly owner: string;
  readonly repo: string;
  readonly attempt: number;
  readonly startAt: StartAt;
  /** For `rewrite`: the attempt whose raw history is reused. */
  readonly fromAttempt?: number;
  /** The attempt syncs a followed origin (the execution is named `owner.repo.sync-N`). */
  readonly sync?: boolean;
  /** A scheduled sync: the origin's fingerprint taken before it started (`Complete` records it). */
  readonly originFingerprint?: string;
  /**
   * A restart that continues `fromAttempt`, an attempt of the same import that failed or was
   * interrupted (`import-resume.ts`): its directory moves on as it is, cursor and all.
   */
  readonly resume?: boolean;
  /**
   * The attempt's execution continues an earlier one of the same attempt, which spent its rounds
   * (`import-continuation.ts`): part 2, 3, … (named `….attempt-N.part-P`).
   */
  readonly part?: number;
  /** For `push`: RewriteHistory's outcome in the part before (which history is pushed). */
  readonly rewrite?: { readonly rewritten?: boolean };
}

let client: SFNClient | undefined;
function sfn(): SFNClient {
  if (!client) {
    client = new SFNClient(awsClientSettings(config().stepFunctionsEndpoint));
  }
  return client;
}

function stateMachineArn(): string {
  const arn = config().importStateMachineArn;
  if (!arn) throw new Error(`${ENV.importStateMachineArn} must be set to run imports`);
  return arn;
}

/** An attempt's execution ARN, derived from its name when the import item has none recorded yet. */
export function executionArnOf(record: Import): string | undefined {
  if (record.executionArn) return record.executionArn;
  const machine = config().importStateMachineArn;
  if (!machine) return undefined;
  return `${machine.replace(':stateMachine:', ':execution:')}:${executionName(record.ownerLogin, record.repoName, record.attempt)}`;
}

/** Starts the execution of an attempt; its name (`executionNameOf`) reads well in the console. */
export async function startAttempt(input: ImportExecutionInput): Promise<string> {
  const { executionArn } = await sfn().send(
    new StartExecutionCommand({
      stateMachineArn: stateMachineArn(),
      name: executionNameOf(input),
      input: JSON.stringify(input),
    }),
  );
  if (!executionArn) throw new Error('StartExecution returned no executionArn');
  return executionArn;
}

/**
 * Starts a later part of an attempt; idempotent by its name: when a retry finds it already
 * started (`ExecutionAlreadyExists`), its ARN is the answer.
 */
export async function startPart(input: ImportExecutionInput): Promise<string> {
  const name = executionNameOf(input);
  try {
    return await startAttempt(input);
  } catch (error) {
    if ((error as Error).name !== 'ExecutionAlreadyExists') throw error;
    return `${stateMachineArn().replace(':stateMachine:', ':execution:')}:${name}`;
  }
}

/** Stops an attempt's execution; one that already ended (or never started) is not an error. */
export async function stopAttempt(executionArn: string | undefined, cause: string): Promise<void> {
  if (!executionArn) return;
  await sfn()
    .send(new StopExecutionCommand({ executionArn, error: 'ImportStopped', cause }))
    .catch((error: unknown) => {
      if ((error as Error).name !== 'ExecutionDoesNotExist') throw error;
    });
}

/** Whether an attempt's execution has ended (any status but RUNNING; one never started has too). */
export async function executionEnded(executionArn: string | undefined): Promise<boolean> {
  return executionArn === undefined || (await endedExecutionStatus(executionArn)) !== undefined;
}

/**
 * How an execution ended (`ABORTED`, `TIMED_OUT`, `FAILED`, `SUCCEEDED`; `NOT_STARTED` when Step
 * Functions knows none by its ARN), or undefined while it runs.
 */
export async function endedExecutionStatus(executionArn: string): Promise<string | undefined> {
  try {
    const { status } = await sfn().send(new DescribeExecutionCommand({ executionArn }));
    return status === 'RUNNING' ? undefined : (status ?? 'UNKNOWN');
  } catch (error) {
    if ((error as Error).name === 'ExecutionDoesNotExist') return 'NOT_STARTED';
    throw error;
  }
}

/**
 * Resumes an execution paused at a `.waitForTaskToken` state. A token whose execution has ended
 * (stopped, timed out) is ignored: the import item already says what happened.
 */
export async function resumeWaiting(
  taskToken: string | undefined,
  output: Record<string, unknown> = {},
): Promise<void> {
  if (!taskToken) return;
  await sfn()
    .send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) }))
    .catch((error: unknown) => {
      const name = (error as Error).name;
      if (name !== 'TaskTimedOut' && name !== 'TaskDoesNotExist' && name !== 'InvalidToken') throw error;
    });
}
