/**
 * The context of the git calls of one import step on local repositories (the history and push
 * steps): a private HOME, a time limit per call, and the signal that stops the step's writing
 * when it passes a limit.
 */
import type { GitRun } from './git-command.ts';

/** Context of every git call of a job: its private HOME (see `prepareHome`) and a time limit per call. */
export interface GitJob {
  readonly home: string;
  readonly timeoutMs: number;
  /** Kills the running call's process group (a step over its size limit, see `withinSize`). */
  readonly signal?: AbortSignal;
}

/** A git call in `cwd` with local transports only. */
export const localRun = (cwd: string, job: GitJob): GitRun => ({
  cwd,
  home: job.home,
  transport: 'local',
  timeoutMs: job.timeoutMs,
  signal: job.signal,
});
