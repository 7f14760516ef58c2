/**
 * Batches of imports (issue 37, an extension of the import API): one request creates the
 * repositories and imports of many projects: the projects of one origin (a Subversion root of
 * several `*\/trunk` projects, an hgweb index, a TFVC collection) or a list of origins. Each
 * import is an ordinary import (its own progress page, report, events and sync); the batch only
 * names them, shares their credentials and options, and bounds how many run at once
 * (docs/decisions/0145-import-batch-queue.md).
 */
import { foldAsciiCase } from './ascii-case.ts';
import type { ImportChoices, ImportStatus, ProjectChoice, UseLfs, Vcs } from './imports.ts';
import { isValidRepositoryName } from './repositories.ts';

/**
 * Most entries one batch may hold. Every repository of a batch is created before any import
 * starts, in transactions of 45 (`data/import-batches.ts`), and the batch's page and answer
 * list every entry: 200 keeps that to five transactions, one answer of about 100 KB and a
 * dashboard that still reads well (issue 37 asks for 200 repositories). A larger server is
 * several batches.
 */
export const MAX_BATCH_ENTRIES = 200;

/**
 * Where an entry is in the batch's queue (the import's own status says the rest):
 * - `queued`: its repository exists, empty; no import yet (it waits for a slot);
 * - `started`: its import was created and started (it is an ordinary import from then on);
 * - `not_started`: taking its turn failed (the repository changed meanwhile, the workflow did not
 *   start); `message` says why;
 * - `cancelled`: the batch was cancelled before it started.
 */
export const BATCH_ENTRY_STATES = ['queued', 'started', 'not_started', 'cancelled'] as const;
export type BatchEntryState = (typeof BATCH_ENTRY_STATES)[number];

/**
 * Whether an entry holds one of the batch's running slots: `held` from the moment it takes its
 * turn until its import first settles (`releasesSlot`), `released` after, `none` before.
 */
export type BatchSlot = 'none' | 'held' | 'released';

/** What a new entry imports: an origin, and the project of it when the origin holds several. */
export interface BatchEntrySpec {
  /** Position in the request (0-based): errors and the answer name entries by it. */
  readonly index: number;
  /** The repository it imports into (the caller's). */
  readonly repository: string;
  readonly vcs: Vcs | null;
  readonly vcsUrl: string;
  readonly tfvcProject?: string | undefined;
  /** The project of a multi-project origin, as detection names it; absent: the whole URL. */
  readonly project?: ProjectChoice | undefined;
}

export interface BatchEntry extends BatchEntrySpec {
  readonly state: BatchEntryState;
  readonly slot: BatchSlot;
  /** The import id allocated at creation (its credentials are sealed to it). */
  readonly importId: number;
  /** Why it did not start (`not_started`). */
  readonly message?: string | undefined;
  readonly startedAt?: string | undefined;
}

/** How the batch's imports follow their origins once complete (absent: they do not). */
export interface BatchFollow {
  /** Minutes between syncs; null: on demand only. */
  readonly intervalMinutes: number | null;
}

/** Options every import of the batch shares. */
export interface BatchOptions {
  /** Decided up front (the imports do not wait for the choice), or `undecided`. */
  readonly useLfs: UseLfs;
  readonly choices: ImportChoices;
  readonly private: boolean;
  readonly follow: BatchFollow | null;
  /** Imports of this batch that run at once (at most the service's setting). */
  readonly concurrency: number;
}

export interface ImportBatch {
  readonly id: number;
  readonly ownerLogin: string;
  readonly options: BatchOptions;
  readonly hasCredentials: boolean;
  /** Entries in the batch. */
  readonly total: number;
  /** Entries still `queued`. */
  readonly queued: number;
  /** Slots held (imports of the batch running now, as far as the batch knows). */
  readonly running: number;
  /** The import the batch was made from (`from_import`), if any. */
  readonly fromImport?: string | undefined;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/**
 * An import stops holding its batch slot when no worker runs it: complete, failed, or waiting for
 * a person (credentials, a project or LFS choice). Waiting frees the slot so that one forgotten
 * question cannot stall the whole batch.
 */
export const releasesSlot = (status: ImportStatus): boolean =>
  status !== 'detecting' && status !== 'importing' && status !== 'mapping' && status !== 'pushing';

/**
 * A repository name for a project or origin URL: its last path segment, with what GitHub's name
 * rule refuses replaced by `-` (as GitHub's new-repository form does), a `.git` suffix dropped,
 * at most 100 characters. `repository` when nothing usable is left.
 */
export function derivedRepositoryName(source: string): string {
  const segments = source
    .replace(/[?#].*$/, '')
    .split('/')
    .filter((segment) => segment !== '');
  let name = (segments.at(-1) ?? '').replace(/[^A-Za-z0-9._-]+/g, '-');
  if (foldAsciiCase(name).endsWith('.git')) name = name.slice(0, -4);
  name = name.slice(0, 100).replace(/^[.]+$/, '');
  return isValidRepositoryName(name) ? name : 'repository';
}

/** The project of a multi-project origin a request names, built as detection names it. */
export function projectChoiceOf(vcs: Vcs, name: string): ProjectChoice | undefined {
  const trimmed = name.replace(/^\/+|\/+$/g, '');
  if (trimmed === '' || trimmed.length > 255) return undefined;
  switch (vcs) {
    // `functions/vcs/subversion/detect.ts`: a child of the root that holds a trunk.
    case 'subversion':
      return trimmed.includes('/') ? undefined : { vcs, humanName: trimmed, path: trimmed };
    // `functions/vcs/mercurial/detect.ts`: the index's path, below the index, with its slash.
    case 'mercurial':
      return { vcs, humanName: trimmed, path: `${trimmed}/` };
    // `functions/vcs/tfvc/detect.ts`: the team project.
    case 'tfvc':
      return trimmed.includes('/') ? undefined : { vcs, humanName: trimmed, tfvcProject: trimmed };
    case 'git':
      return undefined;
  }
}

/** A field error about one entry of a batch request. */
export interface EntryProblem {
  readonly index: number;
  readonly field: 'repository' | 'project' | 'vcs_url' | 'vcs';
  readonly code: 'invalid' | 'already_exists' | 'missing_field';
  readonly message: string;
}

/**
 * The problems of a batch's names that need no database: each name invalid, and each name used
 * twice (case-insensitively; every use after the first is reported).
 */
export function nameProblems(
  entries: readonly Pick<BatchEntrySpec, 'index' | 'repository'>[],
): EntryProblem[] {
  const problems: EntryProblem[] = [];
  const seen = new Map<string, number>();
  for (const entry of entries) {
    if (!isValidRepositoryName(entry.repository)) {
      problems.push({
        index: entry.index,
        field: 'repository',
        code: 'invalid',
        message: 'repository may only contain letters, digits, ".", "-" and "_" (at most 100)',
      });
      continue;
    }
    const key = foldAsciiCase(entry.repository);
    const first = seen.get(key);
    if (first === undefined) seen.set(key, entry.index);
    else
      problems.push({
        index: entry.index,
        field: 'repository',
        code: 'already_exists',
        message: `imports[${first}] already names the repository ${entry.repository}`,
      });
  }
  return problems;
}

/** The batch's concurrency: what the request asked for, within 1 and the service's bound. */
export const batchConcurrency = (asked: number | undefined, bound: number): number =>
  Math.max(1, Math.min(asked ?? bound, bound));

/**
 * Why an entry of a batch cannot take an authors file now (undefined: it can). Only a complete
 * import (or one rewriting for a mapping, `mapping`) knows all of its authors; the others are
 * skipped and take the file when it is sent again (docs/decisions/0157-a-batch-authors-file.md).
 * The single import's own rule (commits pushed by the owner: 422) is the single import's to apply.
 */
export function authorsFileSkip(
  entry: Pick<BatchEntry, 'state'>,
  status: ImportStatus | undefined,
): string | undefined {
  if (status === 'complete' || status === 'mapping') return undefined;
  if (status === undefined)
    return entry.state === 'queued'
      ? 'queued: the import has not started yet'
      : entry.state === 'started'
        ? 'the import was deleted'
        : `the import never started (${entry.state.replace('_', ' ')})`;
  if (status === 'detecting' || status === 'importing' || status === 'pushing')
    return `still importing (${status}): its authors are not all known yet`;
  return `the import is not complete (${status}): its authors are not all known`;
}
