/**
 * Batches of imports (issue 37, an extension of the import API): what each request of
 * `/user/import-batches` does, and what the workflow's settle points and the sync scheduler do to
 * move a batch's queue on. Every import of a batch is an ordinary import made and driven by the
 * single-import use cases (`imports.ts`, `import-sync.ts`); the batch names them, shares their
 * credentials and options, and bounds how many run at once (docs/decisions/0145-import-batch-queue.md).
 *
 * Contract for callers (the API handlers, the progress page, the batch dashboard):
 * - `createImportBatch` checks every entry before anything is written (422 naming each bad entry
 *   `imports[N].repository` / `.project` / `.vcs_url`), then creates every repository and entry,
 *   then starts up to `concurrency` imports; the others wait `queued`.
 * - `importBatch` is the batch with each entry's import (absent while queued) and sync resource.
 * - The actions on all (`cancel…`, `follow…`, `sync…`, `cutOver…`) act entry by entry through the
 *   single-import functions and report each entry's outcome; one entry's refusal never stops the
 *   others (the HTTP answer is 200 with `outcomes`).
 * - Only the batch's owner sees it; everyone else gets 404.
 */
import type { BatchEntry, BatchEntrySpec, BatchFollow, ImportBatch } from '#domain/import-batches';
import type { ImportSync } from '#domain/import-sync';
import type { Import, SentImportChoices, UseLfs } from '#domain/imports';
import type { Page, PageRequest } from '#domain/pagination';
import type { Caller } from './authenticate.ts';

// ---- Types --------------------------------------------------------------------------------

/** A project of a multi-project origin as a request names it, with its repository's name. */
export interface NamedProject {
  readonly name: string;
  /** Absent: derived from the project's name (`derivedRepositoryName`). */
  readonly repository?: string | undefined;
}

/** One origin of a list (`imports`), as a request sends it. */
export interface NamedOrigin {
  readonly vcsUrl: string;
  readonly vcs?: string | undefined;
  readonly tfvcProject?: string | undefined;
  /** Absent: derived from the URL's last segment (or the TFVC project). */
  readonly repository?: string | undefined;
}

/** Where the batch's entries come from (exactly one of the request's three forms). */
export type BatchSource =
  /** (a) Several projects of one origin, by the names detection gives them. */
  | {
      readonly kind: 'projects';
      readonly vcsUrl: string;
      readonly vcs: string;
      readonly projects: readonly NamedProject[];
    }
  /** (b) A list of origins, one import each. */
  | { readonly kind: 'origins'; readonly origins: readonly NamedOrigin[] }
  /**
   * An import waiting in `detection_found_multiple`: it takes the first project named (as the
   * PATCH project choice does) and the others get new repositories. `projects` absent: all of its
   * `project_choices`.
   */
  | {
      readonly kind: 'from-import';
      readonly owner: string;
      readonly repo: string;
      readonly projects?: readonly NamedProject[] | undefined;
    };

export interface NewBatchInput {
  readonly source: BatchSource;
  readonly vcsUsername?: string | undefined;
  readonly vcsPassword?: string | undefined;
  readonly useLfs?: Exclude<UseLfs, 'undecided'> | undefined;
  readonly choices: SentImportChoices;
  readonly private?: boolean | undefined;
  /** Each import follows its origin once complete (null interval: on demand only). */
  readonly follow?: BatchFollow | undefined;
  /** Fewer at once than the service's bound (never more). */
  readonly concurrency?: number | undefined;
}

/** One entry as the batch resource shows it. */
export interface BatchEntryView {
  readonly entry: BatchEntry;
  /** Absent while the entry is queued, cancelled before it started, or its import was deleted. */
  readonly record?: Import | undefined;
  /** The entry's sync resource once it has an import (`off` until it follows). */
  readonly sync?: ImportSync | undefined;
}

export interface BatchView {
  readonly batch: ImportBatch;
  readonly entries: readonly BatchEntryView[];
}

/** What an action on all did to one entry. */
export interface EntryOutcome {
  readonly index: number;
  readonly repository: string;
  /** `done`: the action applied; `skipped`: nothing to do (e.g. already complete, still queued); `failed`: refused. */
  readonly outcome: 'done' | 'skipped' | 'failed';
  /** The HTTP status the single-import action answered (failed only). */
  readonly status?: number | undefined;
  readonly message?: string | undefined;
}

export interface BatchActionResult {
  readonly view: BatchView;
  readonly outcomes: readonly EntryOutcome[];
}

// ---- API ----------------------------------------------------------------------------------

/** POST /user/import-batches. */
export async function createImportBatch(_caller: Caller, _input: NewBatchInput): Promise<BatchView> {
  throw new Error('createImportBatch: not yet');
}

/** GET /user/import-batches/:batch_id: the batch, its entries, their imports and sync resources. */
export async function importBatch(_caller: Caller, _batchId: number): Promise<BatchView> {
  throw new Error('importBatch: not yet');
}

/** GET /user/import-batches: the caller's batches, newest first, one page (no entries). */
export async function listImportBatches(_caller: Caller, _page: PageRequest): Promise<Page<ImportBatch>> {
  throw new Error('listImportBatches: not yet');
}

/** DELETE /user/import-batches/:batch_id: cancels every import not complete; queued entries never start. */
export async function cancelImportBatch(_caller: Caller, _batchId: number): Promise<BatchActionResult> {
  throw new Error('cancelImportBatch: not yet');
}

/**
 * PUT …/:batch_id/sync: every complete import follows its origin with this interval; those not
 * complete yet follow once they complete (the batch remembers the interval).
 */
export async function followImportBatch(
  _caller: Caller,
  _batchId: number,
  _intervalMinutes: number | null,
): Promise<BatchActionResult> {
  throw new Error('followImportBatch: not yet');
}

/** POST …/:batch_id/sync: syncs every following import now. */
export async function syncImportBatch(_caller: Caller, _batchId: number): Promise<BatchActionResult> {
  throw new Error('syncImportBatch: not yet');
}

/** DELETE …/:batch_id/sync: cuts every following import over; the batch stops following. */
export async function cutOverImportBatch(_caller: Caller, _batchId: number): Promise<BatchActionResult> {
  throw new Error('cutOverImportBatch: not yet');
}

// ---- Queue (workflow settle points and the scheduler) -------------------------------------

/**
 * After an import's status changed to one that `releasesSlot`: when it belongs to a batch and
 * still holds its slot, the slot is released (once), a complete import follows as the batch
 * asks, and the next queued entries start. Never throws (it runs after the import's own write).
 */
export async function batchImportSettled(_owner: string, _repo: string): Promise<void> {}

/**
 * Starts queued entries of a batch while slots are free (each slot a conditional write on the
 * batch's running count). Returns how many started.
 */
export async function startQueuedEntries(_owner: string, _batchId: number): Promise<number> {
  return 0;
}

/**
 * The safety net (the sync scheduler, once a minute): every batch with queued entries releases the
 * slots of imports that have settled or whose execution ended without a word, then starts what
 * fits. Returns how many entries started.
 */
export async function tendBatchQueues(): Promise<number> {
  return 0;
}

export type { BatchEntrySpec };
