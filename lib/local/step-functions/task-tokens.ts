/**
 * Task tokens of callback (`.waitForTaskToken`) tasks, and the clock of every task this endpoint
 * times itself. A pending task ends once, with the first of: SendTaskSuccess, SendTaskFailure,
 * its TimeoutSeconds, a missed heartbeat, or its execution ending; from then on its token answers
 * TaskTimedOut, as AWS answers for a task that "does not exist anymore".
 *
 * Tokens are 256 random bits with a version byte, base64url: opaque and unguessable. One that does
 * not have that form is InvalidToken; one that has it but was never issued here (e.g. stored before
 * the local stack restarted) is TaskDoesNotExist.
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from './api-error.ts';

export type TaskOutcome =
  | { kind: 'succeeded'; output: string }
  | { kind: 'failed'; error?: string; cause?: string }
  | { kind: 'timedOut'; heartbeat: boolean }
  | { kind: 'aborted' };

export interface TaskLimits {
  timeoutSeconds?: number;
  heartbeatSeconds?: number;
}

const TOKEN_VERSION = 1;
const TOKEN_RANDOM_BYTES = 32;
/**
 * aws-local-stepfunctions times every Task with one setTimeout, and Node fires a timer longer than
 * 2^31-1 ms after 1 ms; callback tasks are loaded with this TimeoutSeconds for the library and timed
 * here, a second earlier, so this clock always decides.
 */
export const LIBRARY_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);
const LONGEST_WAIT_MS = (LIBRARY_TIMER_SECONDS - 1) * 1000;

function newToken(): string {
  return Buffer.concat([Buffer.of(TOKEN_VERSION), randomBytes(TOKEN_RANDOM_BYTES)]).toString('base64url');
}

function wellFormed(token: string): boolean {
  const bytes = Buffer.from(token, 'base64url');
  return (
    bytes.length === 1 + TOKEN_RANDOM_BYTES &&
    bytes[0] === TOKEN_VERSION &&
    bytes.toString('base64url') === token
  );
}

/** One running task: its token (callback tasks only), its clocks, and how it ended. */
export class PendingTask {
  readonly outcome: Promise<TaskOutcome>;
  #resolve: (outcome: TaskOutcome) => void = () => {};
  #open = true;
  #timeout: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(
    readonly token: string | undefined,
    readonly executionArn: string,
    private readonly limits: TaskLimits,
    private readonly onClose: (task: PendingTask) => void,
  ) {
    this.outcome = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    if (limits.timeoutSeconds !== undefined) {
      const ms = Math.min(limits.timeoutSeconds * 1000, LONGEST_WAIT_MS);
      this.#timeout = setTimeout(() => this.settle({ kind: 'timedOut', heartbeat: false }), ms);
    }
    this.heartbeat();
  }

  get open(): boolean {
    return this.#open;
  }

  /** Ends the task with `outcome` unless it has already ended; says whether it took effect. */
  settle(outcome: TaskOutcome): boolean {
    if (!this.#open) return false;
    this.#open = false;
    clearTimeout(this.#timeout);
    clearTimeout(this.#heartbeat);
    this.onClose(this);
    this.#resolve(outcome);
    return true;
  }

  /** Restarts the HeartbeatSeconds clock (a no-op for a task without one). */
  heartbeat() {
    const seconds = this.limits.heartbeatSeconds;
    if (seconds === undefined || !this.#open) return;
    clearTimeout(this.#heartbeat);
    this.#heartbeat = setTimeout(
      () => this.settle({ kind: 'timedOut', heartbeat: true }),
      Math.min(seconds * 1000, LONGEST_WAIT_MS),
    );
  }
}

/** The pending tasks of one endpoint, and every token it has issued. */
export class TaskTokens {
  readonly #byToken = new Map<string, PendingTask>();
  readonly #open = new Set<PendingTask>();

  /** Starts the clocks of a task; `withToken` issues it a fresh token for `$$.Task.Token`. */
  begin(executionArn: string, limits: TaskLimits, withToken: boolean): PendingTask {
    const token = withToken ? newToken() : undefined;
    const task = new PendingTask(token, executionArn, limits, (closed) => this.#open.delete(closed));
    this.#open.add(task);
    if (token) this.#byToken.set(token, task);
    return task;
  }

  /** The open task a SendTask* call names, or the ApiError AWS answers. */
  find(token: string): PendingTask {
    const task = this.#byToken.get(token);
    if (!task) {
      if (!wellFormed(token)) throw new ApiError('InvalidToken', "Invalid Token: 'Invalid token'");
      throw new ApiError('TaskDoesNotExist', "Task Does Not Exist: 'Provided task does not exist'");
    }
    if (!task.open) {
      throw new ApiError('TaskTimedOut', "Task Timed Out: 'Provided task does not exist anymore'");
    }
    return task;
  }

  /** Ends every pending task of an execution that stopped or ended; their tokens answer TaskTimedOut. */
  closeExecution(executionArn: string) {
    for (const task of [...this.#open]) {
      if (task.executionArn === executionArn) task.settle({ kind: 'aborted' });
    }
  }
}
