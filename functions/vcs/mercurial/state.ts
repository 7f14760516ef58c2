/**
 * What a Mercurial import keeps between chunks (the function may be killed between them, or during
 * one), how the raw step is cut into steps, and one chunk's view of them: its paths, progress and
 * what is left of its time.
 */
import { join } from 'node:path';
import { type ChunkCursor, chunkCursor } from '#vcs/chunk-cursor';
import type { RawJob, RawProgress } from '#vcs/origin';

/**
 * How the pull is cut: with a large budget the whole history in one pull; otherwise `hg pull -r N`
 * (revision N of the origin and its ancestors) for N = firstRevs−1, then growing by `growth`,
 * until the origin has no revision N; then one pull of everything left. The conversion to Git runs
 * after the whole pull, in ranges of revisions that shrink when one does not fit its time limit.
 */
export interface HgChunkPlan {
  readonly fullPullMinBudgetMs: number;
  readonly firstRevs: number;
  readonly growth: number;
  /** A step's time limit when little budget is left (the first step of a chunk always runs). */
  readonly minStepTimeoutMs: number;
  /** Most revisions the first conversion run takes (default: all; a run that times out shrinks it). */
  readonly convertRevs?: number;
  /** A conversion run's time limit (default: what is left of the budget, at least `minStepTimeoutMs`). */
  readonly convertTimeoutMs?: number;
}

export const DEFAULT_HG_CHUNK_PLAN: HgChunkPlan = {
  fullPullMinBudgetMs: 120_000,
  firstRevs: 5000,
  growth: 2,
  minStepTimeoutMs: 120_000,
};

export interface HgState {
  readonly version: 1;
  mode: 'full' | 'steps';
  /** Revisions the next `pull -r` asks for (its target is `revs - 1`). */
  revs: number;
  /** A `pull -r` step succeeded: a later whole pull is the rest of the history, not all of it. */
  stepped: boolean;
  /** Everything is in raw.hg. */
  pulled: boolean;
  /** The origin's revision count, asked before the first pull; null when it would not say. */
  total?: number | null;
  /** Revisions in raw.hg (after the last pull step). */
  pulledRevs?: number;
  /** Revisions 0 … converted−1 are in raw.git. */
  converted?: number;
  /** Most revisions one conversion run takes; absent: all that are left. */
  convertBatch?: number;
  percent: number;
  commitCount: number | null;
  done: boolean;
  /**
   * A sync reopened this finished history (`reopen.ts`): before anything is pulled, the origin is
   * asked whether it still has every changeset raw.hg holds (`origin-rewritten.ts`).
   */
  reopened?: boolean;
  /** Every branch head of raw.hg (closed ones too) when last converted: what a sync asks the origin about. */
  heads?: string[];
}

/** Percent of the raw step the pull takes; the conversion takes the rest up to 99. */
export const PULL_SHARE = 50;

export const rawHgPath = (workDir: string): string => join(workDir, 'raw.hg');

/** The cursor of the Mercurial raw step; a first chunk starts from `mode` with the plan's first step. */
export const hgCursor = (mode: HgState['mode'], plan: HgChunkPlan) =>
  chunkCursor<HgState>('raw-hg-state.json', () => ({
    version: 1,
    mode,
    revs: plan.firstRevs,
    stepped: false,
    pulled: false,
    percent: 0,
    commitCount: null,
    done: false,
  }));

/** One chunk of the raw step, as its pull and conversion steps share it. */
export interface HgChunk {
  readonly job: RawJob;
  /** The repository pulled (the job's URL, or the chosen repository of an hgweb index). */
  readonly url: string;
  readonly home: string;
  readonly hgRepo: string;
  readonly gitRepo: string;
  readonly plan: HgChunkPlan;
  readonly budgetMs: number;
  readonly started: number;
  readonly state: HgState;
  /** Reports progress (at most 99 before the end); never backwards, never the same twice. */
  report(percent: number, commitCount: number | null): void;
  /** Steps done in this chunk, and how long the last one took. */
  steps: number;
  lastStepMs: number;
  /** The first step of a chunk always runs; a later one only when about as long a step fits. */
  outOfTime(remaining: number): boolean;
  save(): Promise<void>;
}

export function hgChunk(
  fields: Omit<HgChunk, 'report' | 'steps' | 'lastStepMs' | 'outOfTime' | 'save'>,
  cursor: ChunkCursor<HgState>,
  onProgress: (progress: RawProgress) => void,
): HgChunk {
  const { state, plan } = fields;
  const chunk: HgChunk = {
    ...fields,
    steps: 0,
    lastStepMs: 0,
    report(percent, commitCount) {
      const rounded = Math.min(99, Math.floor(percent));
      if (rounded < state.percent || (rounded === state.percent && commitCount === state.commitCount)) return;
      state.percent = rounded;
      state.commitCount = commitCount;
      onProgress({ commitCount, percent: rounded });
    },
    outOfTime: (remaining) =>
      chunk.steps > 0 && (remaining <= 0 || chunk.lastStepMs * plan.growth > remaining),
    save: () => cursor.save(fields.job.workDir, state),
  };
  return chunk;
}
