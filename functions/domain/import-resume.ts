/**
 * Restart resumes (issue 36 item 3): a restart of an import that failed or was interrupted, with
 * the same origin and choices, continues from what its last attempt committed on disk (the raw
 * history so far and its adapter's cursor, moved on to the new attempt) instead of importing the
 * whole history again. The new attempt starts at the raw step: its next chunk continues the
 * cursor (a finished one answers at once), and the rewrite and the push, which are derived from
 * the raw history, run again. The result is a fresh import's, id for id: every raw chunk is
 * already written to be re-run from its committed state (Step Functions retries it so).
 */
import type { FailedStep, Import, ImportChoices } from './imports.ts';

/**
 * Whether a restart of `record` resumes. It starts over for an import without a `vcs` (nothing
 * imported yet), a restart that changes the owner's choices (the raw history depends on them), a
 * complete import (a restart asks for it again), one still detecting or waiting at detection, and
 * one whose attempt still runs (its step would go on writing in the directory the restart moves):
 * `executionEnded` says that the attempt's execution stopped, timed out or failed.
 */
export function restartResumes(
  record: Pick<Import, 'vcs' | 'status' | 'failedStep'>,
  choicesChange: boolean,
  executionEnded: boolean,
): boolean {
  if (record.vcs === null || choicesChange) return false;
  switch (record.status) {
    case 'error':
      return record.failedStep !== undefined && record.failedStep !== 'detection';
    case 'auth_failed':
      // The origin refused the credentials in the raw step: its chunks so far stay good.
      return true;
    case 'importing':
    case 'mapping':
    case 'pushing':
      return executionEnded;
    default:
      return false;
  }
}

/** Statuses in which an attempt's execution may have ended without a word (stopped, timed out). */
export const mayBeInterrupted = (status: Import['status']): status is 'importing' | 'mapping' | 'pushing' =>
  status === 'importing' || status === 'mapping' || status === 'pushing';

/** Two sets of the owner's choices import the same raw history. */
export const sameChoices = (a: ImportChoices, b: ImportChoices): boolean =>
  a.keepEmptyDirectories === b.keepEmptyDirectories && a.keepDeletedRefs === b.keepDeletedRefs;

/**
 * How long an import in progress must have written nothing before a read asks Step Functions
 * whether its execution still runs (every chunk, progress report and status change writes the item).
 */
export const QUIET_BEFORE_CHECK_MS = 10_000;

/** The statuses a workflow step leaves by itself: an import in one may have stopped without a word. */
export type InProgressStatus = 'detecting' | 'importing' | 'mapping' | 'pushing';

const inProgress = (status: Import['status']): status is InProgressStatus =>
  status === 'detecting' || mayBeInterrupted(status);

/** Whether a read of `record` at `now` asks whether its execution ended without a word. */
export const worthCheckingEnded = (
  record: Pick<Import, 'status' | 'updatedAt'>,
  now: number,
): record is Pick<Import, 'updatedAt'> & { status: InProgressStatus } =>
  inProgress(record.status) && now - Date.parse(record.updatedAt) >= QUIET_BEFORE_CHECK_MS;

const STEP_OF_STATUS = {
  detecting: 'detection',
  importing: 'raw',
  mapping: 'rewrite',
  pushing: 'push',
} as const;
const STEP_NAME = {
  detection: 'detection',
  raw: 'the raw import',
  rewrite: 'the history rewrite',
  push: 'the push',
};

/**
 * What an import whose execution ended without a word (`executionStatus`: ABORTED, TIMED_OUT,
 * FAILED, or SUCCEEDED without a last write) shows: `error` in the step its status was in, and
 * what a restart does (`restartResumes`: an `error` after detection resumes; detection starts over).
 */
export function interruptedFailure(
  status: InProgressStatus,
  executionStatus: string,
): { failedStep: FailedStep; errorMessage: string } {
  const failedStep = STEP_OF_STATUS[status];
  const restart =
    failedStep === 'detection'
      ? 'restart the import to detect it again'
      : 'restart the import to continue where it stopped';
  return {
    failedStep,
    errorMessage: `The import's workflow execution stopped (${executionStatus}) during ${STEP_NAME[failedStep]} without finishing it; ${restart}`,
  };
}
