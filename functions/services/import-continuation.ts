/**
 * A very long import continues in a new execution (issue 36 item 2): Step Functions fails an
 * execution whose history reaches 25,000 events, and each round of the raw step's or the push
 * step's loop writes seven (Task entered, Lambda scheduled, started, succeeded, Task exited, the
 * Choice entered and exited), more when retried. The loop steps count their rounds in their own
 * output (`$.raw.rounds`, then `$.push.rounds` from the raw step's count on); past
 * `importRoundsPerExecution` (1,000 by default: about 7,000 events) they ask for a new execution
 * (`continueInNewExecution`), and the state machine's `ContinueInNewExecution` state starts the next
 * part of the same attempt where this one stopped, then ends this one in `ContinuedInNewExecution`.
 * Every step's progress is on disk and in the table (the next chunk continues the cursor, the next
 * push round the publish), so the new part does just what the old one's next round would have.
 */
import { getImport } from '#data/imports/items';
import { setExecutionArn } from '#data/imports/requests';
import { config } from '#shared/config';
import { log } from '#shared/log';
import { superseded } from './attempt-watch.ts';
import { type ImportExecutionInput, type StartAt, startPart, stopAttempt } from './import-workflow.ts';

/**
 * Step Functions refused to start the next part (its quota of open executions reached, the
 * function's permission gone, …; throttling and outages the SDK has already retried): the import
 * ends in `error` in the step that could not continue, with this message for the person, and a
 * restart continues from what the attempt committed (`import-resume.ts`).
 */
export class ContinuationRefused extends Error {
  override readonly name = 'ContinuationRefused';
}

const refused = (error: unknown): ContinuationRefused => {
  const { name, message } = error as Error;
  return new ContinuationRefused(
    `The import could not continue in a new workflow execution: Step Functions refused to start it (${name}: ${message}); restart the import to continue where it stopped`,
  );
};

/** What a loop step adds to its output: its round in this execution, and whether to continue elsewhere. */
export interface Rounds {
  readonly rounds: number;
  readonly continueInNewExecution: boolean;
}

/** The loop state outputs a step's input may carry (earlier rounds of this execution). */
interface LoopOutputs {
  readonly raw?: { readonly rounds?: number };
  readonly push?: { readonly rounds?: number };
}

/**
 * This round of a loop step (`raw` or `push`): one more than the last round of the execution (the
 * push loop goes on counting from the raw loop's). A step that is done never continues elsewhere.
 */
export function nextRound(input: object, loop: 'raw' | 'push', done: boolean): Rounds {
  // The state's whole input reaches the step (no Parameters): earlier loop outputs ride along.
  const { raw, push } = input as LoopOutputs;
  const before = loop === 'raw' ? raw?.rounds : (push?.rounds ?? raw?.rounds);
  const rounds = (before ?? 0) + 1;
  return { rounds, continueInNewExecution: !done && rounds >= config().importRoundsPerExecution };
}

/** The `ContinueInNewExecution` state's input: the execution's state, and where the next part starts. */
export type ContinuationInput = ImportExecutionInput & {
  readonly continuation: { readonly startAt: Extract<StartAt, 'import' | 'push'> };
};

/**
 * Starts the next part of the attempt at the loop that spent its rounds, records its ARN on the
 * import (cancel and restart stop that one), and answers. A retry finds the part started and
 * records it again. When the attempt is no longer current (cancelled, restarted), the part it may
 * have started is stopped and the step ends `AttemptSuperseded`. A part Step Functions refuses to
 * start ends the step with `ContinuationRefused`.
 */
export async function continueInNewExecution(input: ContinuationInput): Promise<{ executionArn: string }> {
  const { owner, repo, attempt } = input;
  const record = await getImport(owner, repo);
  if (record?.attempt !== attempt) throw superseded(input);
  const part = (input.part ?? 1) + 1;
  const startAt = input.continuation.startAt;
  const next: ImportExecutionInput = {
    owner,
    repo,
    attempt,
    startAt,
    ...(input.fromAttempt === undefined ? {} : { fromAttempt: input.fromAttempt }),
    ...(input.sync ? { sync: true } : {}),
    ...(input.originFingerprint === undefined ? {} : { originFingerprint: input.originFingerprint }),
    ...(input.resume ? { resume: true } : {}),
    ...(startAt === 'push' && input.rewrite
      ? { rewrite: { rewritten: input.rewrite.rewritten !== false } }
      : {}),
    part,
  };
  const executionArn = await startPart(next).catch((error: unknown) => {
    log('error', 'the next part of the import could not start', {
      owner,
      repo,
      attempt,
      part,
      error: (error as Error).name,
    });
    throw refused(error);
  });
  if (!(await setExecutionArn(owner, repo, attempt, executionArn))) {
    await stopAttempt(executionArn, 'the import was cancelled or restarted');
    throw superseded(input);
  }
  log('info', 'import continues in a new execution', { owner, repo, attempt, part, startAt });
  return { executionArn };
}
