/**
 * A step whose execution environment died, rather than a step that failed: what Lambda reports
 * then, what the workflow does about it, and what the person reads when it keeps happening.
 * Every step is written to be run again from what it committed, so the workflow retries these on
 * every Task (`statemachines/import.asl.json`; test/unit/import-asl.test.ts holds the two equal).
 */
import type { FailedStep } from './imports.ts';

/**
 * - `Runtime.ExitError`: the runtime's process ended (killed, or crashed);
 * - `Runtime.OutOfMemory`: it ended at the function's memory limit;
 * - `Lambda.Unknown`: Step Functions' name when Lambda gave no error type (its guide: out-of-memory
 *   ends and function timeouts);
 * - `Sandbox.Timedout`: the function ran out of its time.
 */
export const WORKER_DEATHS = [
  'Lambda.Unknown',
  'Runtime.ExitError',
  'Runtime.OutOfMemory',
  'Sandbox.Timedout',
] as const;
export type WorkerDeath = (typeof WORKER_DEATHS)[number];

/** Retries after a death, per entry of a state: the ASL retrier's `MaxAttempts`. */
export const WORKER_DEATH_RETRIES = 3;

export const isWorkerDeath = (error: string | undefined): error is WorkerDeath =>
  (WORKER_DEATHS as readonly string[]).includes(error ?? '');

const HOW: Readonly<Record<WorkerDeath, string>> = {
  'Runtime.ExitError': 'its worker was stopped',
  'Runtime.OutOfMemory': 'its worker ran out of memory',
  'Lambda.Unknown': 'its worker ended without a reason (as when it runs out of memory)',
  'Sandbox.Timedout': 'its worker ran out of time',
};

const STEP: Readonly<Record<FailedStep, string>> = {
  detection: 'detection',
  raw: 'raw history',
  rewrite: 'history rewrite',
  push: 'push',
};

/** How far the attempt had got when its worker died last (the import item's progress). */
export interface DeathPlace {
  readonly commitCount?: number | null;
  readonly percent?: number | null;
  readonly pushPercent?: number | null;
}

/** Where in its work the step was, in the person's words. */
function whereIn(step: FailedStep, place: DeathPlace): string {
  switch (step) {
    case 'detection':
      return 'while it identified the origin';
    case 'raw':
      return typeof place.commitCount === 'number'
        ? `while importing, after ${place.commitCount} commits${typeof place.percent === 'number' ? ` (${place.percent}%)` : ''}`
        : 'before the first commit was imported';
    case 'rewrite':
      return 'while it rewrote the history';
    case 'push':
      return `while pushing, at ${place.pushPercent ?? 0}%`;
  }
}

/**
 * "The import's raw history step ended 4 times: its worker was stopped (Runtime.ExitError) while
 * importing, after 120 commits (40%); restart the import to try again".
 */
export function deathMessage(step: FailedStep, death: WorkerDeath, place: DeathPlace = {}): string {
  return `The import's ${STEP[step]} step ended ${WORKER_DEATH_RETRIES + 1} times: ${HOW[death]} (${death}) ${whereIn(step, place)}; restart the import to try again`;
}
