/**
 * What a Subversion import remembers between chunks (`raw-svn-state.json`), how its revisions are
 * cut into steps, and the clock every step of one chunk shares.
 */
import { chunkCursor } from '../chunk-cursor.ts';

/**
 * How the revisions are cut: with a large budget one range of everything; otherwise ranges of
 * `firstRevs` revisions, growing by `growth` after each step that fits the budget.
 */
export interface SvnChunkPlan {
  readonly wholeMinBudgetMs: number;
  readonly firstRevs: number;
  readonly growth: number;
  /** A step's time limit when little budget is left (the first step of a chunk always runs). */
  readonly minStepTimeoutMs: number;
}

export const DEFAULT_SVN_CHUNK_PLAN: SvnChunkPlan = {
  wholeMinBudgetMs: 120_000,
  firstRevs: 2000,
  growth: 2,
  minStepTimeoutMs: 120_000,
};

/** The origin as `svn info` of the imported URL describes it. */
export interface SvnOrigin {
  readonly uuid: string;
  readonly youngest: number;
  /** The imported URL's path in its repository. */
  readonly path: string;
}

export interface SvnState {
  readonly version: 1;
  mode: 'whole' | 'ranges';
  revs: number;
  /** From `svn info` of the imported URL, at the first chunk. */
  origin: SvnOrigin | null;
  /** Revisions in raw.svn (its youngest; revision 0 is loaded with the first range). */
  loaded: number;
  /** Revisions of raw.svn converted into raw.git so far (0: none). */
  converted: number;
  /** Revisions of raw.svn scanned for the import report (`history-findings.ts`) so far. */
  scanned: number;
  /**
   * Reopened by a sync (`follow.ts`): the next chunk checks that the origin still has the history
   * mirrored before it continues it.
   */
  following: boolean;
  /** Revisions per conversion step in `ranges` mode. */
  convertRevs: number;
  percent: number;
  commitCount: number | null;
  done: boolean;
}

export const svnCursor = (mode: SvnState['mode'], plan: SvnChunkPlan) =>
  chunkCursor<SvnState>('raw-svn-state.json', () => ({
    version: 1,
    mode,
    revs: plan.firstRevs,
    origin: null,
    loaded: 0,
    converted: 0,
    scanned: 0,
    following: false,
    convertRevs: plan.firstRevs,
    percent: 0,
    commitCount: null,
    done: false,
  }));

/**
 * The steps of one chunk (loading, then converting) against its budget: the first step always
 * runs; a later one only when the last step, grown by the plan's factor, still fits.
 */
export class StepClock {
  steps = 0;
  lastStepMs = 0;
  constructor(
    readonly started: number,
    readonly budgetMs: number,
    readonly plan: SvnChunkPlan,
  ) {}

  remaining(): number {
    return this.started + this.budgetMs - Date.now();
  }

  /** Whether another step may start now. */
  mayStep(): boolean {
    const remaining = this.remaining();
    return !(this.steps > 0 && (remaining <= 0 || this.lastStepMs * this.plan.growth > remaining));
  }

  /** A step's time limit: what is left, or the plan's minimum. */
  stepTimeout(): number {
    return Math.max(this.remaining(), this.plan.minStepTimeoutMs);
  }

  stepDone(stepStarted: number): void {
    this.steps += 1;
    this.lastStepMs = Date.now() - stepStarted;
  }
}
