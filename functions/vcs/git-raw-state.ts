/**
 * The Git raw step's cursor (`raw-state.json` in the attempt's directory): what survives between
 * chunks, since the function may be killed between them. Shared by the import (`git.ts`) and by
 * the reopening of a finished raw history for a sync (`git-follow.ts`).
 */
import { chunkCursor } from './chunk-cursor.ts';

/**
 * How the raw history is cut into chunks. `git fetch` cannot resume a killed transfer, so a chunk
 * is a whole fetch: with a large budget the whole history at once (one fetch, like `git clone
 * --mirror`); otherwise, or when that did not fit in one budget, by history depth: `--depth` of
 * `firstDepth` commits per ref, then `--deepen` by steps that grow by `growth` until the
 * repository is no longer shallow.
 */
export interface ChunkPlan {
  /** A chunk budget at least this long first tries the whole history in one fetch. */
  readonly fullFetchMinBudgetMs: number;
  readonly firstDepth: number;
  readonly growth: number;
  /** A step's time limit when little budget is left (the first step of a chunk always runs). */
  readonly minStepTimeoutMs: number;
}

export const DEFAULT_CHUNK_PLAN: ChunkPlan = {
  fullFetchMinBudgetMs: 120_000,
  firstDepth: 1000,
  growth: 2,
  minStepTimeoutMs: 120_000,
};

export interface RawState {
  readonly version: 1;
  /** The origin's HEAD branch; null when it has none; absent until asked. */
  defaultBranch?: string | null;
  /**
   * `full`: the whole history in one fetch limited by the budget; `depth`: by depth steps;
   * `whole`: an origin that cannot fetch by depth (dumb HTTP), fetched whole in one long step;
   * `sync`: a finished raw history reopened by a sync, which fetches only what the origin gained
   * (`git-follow.ts`).
   */
  mode: 'full' | 'depth' | 'whole' | 'sync';
  /** The next `--depth`/`--deepen` step. */
  step: number;
  /** A depth fetch happened: later steps deepen. */
  shallowStarted: boolean;
  percent: number;
  commitCount: number | null;
  done: boolean;
  /**
   * Every fetch so far had git check each object it wrote (`arrival-check.ts`); absent in a cursor
   * written before this field existed, which counts as unchecked.
   */
  checkedOnArrival?: boolean;
}

export const RAW_STATE_FILE = 'raw-state.json';

/** The cursor of the Git raw step; a first chunk starts from `mode` with the plan's first depth. */
export const gitCursor = (mode: RawState['mode'], plan: ChunkPlan) =>
  chunkCursor<RawState>(RAW_STATE_FILE, () => ({
    version: 1,
    mode,
    step: plan.firstDepth,
    shallowStarted: false,
    percent: 0,
    commitCount: null,
    done: false,
    checkedOnArrival: true,
  }));
