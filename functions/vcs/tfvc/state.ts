import { chunkCursor } from '#vcs/chunk-cursor';

export interface TfvcState {
  readonly version: 1;
  /** The collection's URL (no trailing slash) and the project, once located. */
  collection?: string;
  project?: string;
  /** Every changeset of the project is in `tfvc-changesets.json`. */
  listed: boolean;
  /** The labels, shelvesets and branches are in the job's findings. */
  serverFindings?: boolean;
  /** Changesets replayed into raw.git (a prefix of the listing). */
  replayed: number;
  total: number | null;
  done: boolean;
  /**
   * The last changeset replayed into raw.git, its comment whole: what a sync checks the origin
   * still has (`follow.ts`). Absent before the first batch (and in imports made before syncs).
   */
  last?: ListedChangeset;
}

export interface TfvcIdentity {
  readonly displayName: string;
  readonly uniqueName: string;
}

/** One changeset of the listing, as much as a commit needs (the full comment is fetched if cut). */
export interface ListedChangeset {
  readonly id: number;
  readonly author: TfvcIdentity;
  readonly committer: TfvcIdentity;
  readonly date: string;
  readonly comment: string;
  readonly truncated: boolean;
}

export const LISTING_FILE = 'tfvc-changesets.json';
export const MARKS_FILE = 'tfvc-marks';

export const cursor = chunkCursor<TfvcState>('raw-tfvc-state.json', () => ({
  version: 1,
  listed: false,
  replayed: 0,
  total: null,
  done: false,
}));
