/**
 * The port every origin type implements (one adapter per VCS: git now; subversion, mercurial and
 * tfvc follow). An adapter detects its VCS at a URL, fetches the raw history into the job's
 * working directory as a Git repository in bounded chunks, and lists the authors it found. Every
 * later step (large files, rewriting, pushing) works on that Git repository and is the same for
 * all origin types.
 *
 * Error class names are part of the workflow's contract: `statemachines/import.asl.json` matches
 * them in `ErrorEquals`.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ImportChoices, ProjectChoice, Vcs } from '#domain/imports';

export interface OriginCredentials {
  readonly username: string;
  readonly password: string;
}

/** Everything an adapter may know about the origin. Credentials never go on a command line or in a URL. */
export interface OriginAccess {
  readonly url: string;
  readonly credentials?: OriginCredentials;
  /** Addresses allowed although private or loopback (config `ORIGIN_ALLOWED_ADDRESSES`). */
  readonly allowedAddresses: readonly string[];
  /** TFVC: the team project the user named (`tfvc_project`), if any. */
  readonly tfvcProject?: string;
}

export type Detection =
  | { readonly kind: 'found'; readonly vcs: Vcs }
  | { readonly kind: 'needs_auth' }
  | { readonly kind: 'nothing' }
  | { readonly kind: 'multiple'; readonly choices: readonly ProjectChoice[] };

export interface RawJob extends OriginAccess {
  /** The attempt's own directory: persists across chunks, holds the Git repository at `rawRepositoryPath(workDir)`. */
  readonly workDir: string;
  /** The chosen project, for origins where detection found several. */
  readonly choice?: ProjectChoice;
  /** The owner's choices (`DEFAULT_IMPORT_CHOICES` when absent). */
  readonly choices?: ImportChoices;
}

export interface RawProgress {
  /**
   * Commits in the raw history fetched so far (the total once `done`); null before the first
   * count. An origin fetched in several chunks cannot say its total before the last one.
   */
  readonly commitCount: number | null;
  /** 0–100, null before known. */
  readonly percent: number | null;
}

/** The raw history of an attempt: a bare Git repository every later step works on. */
export const rawRepositoryPath = (workDir: string): string => join(workDir, 'raw.git');

export interface RawChunk extends RawProgress {
  /** The whole history is in `rawRepositoryPath(workDir)`. */
  readonly done: boolean;
}

/** An author as the origin names them, before any mapping. */
export interface OriginAuthor {
  /** Stable identity in the origin (`Name <email>` for Git; `user@<uuid>` for Subversion). */
  readonly remoteId: string;
  readonly remoteName: string;
  /** A valid Git email; the importer makes one up when the origin has none. */
  readonly email: string;
  readonly name: string;
}

export interface OriginAdapter {
  readonly vcs: Vcs;
  /** Probes the URL for this VCS only; `nothing` when it is not this VCS. Never throws for "not found". */
  detect(access: OriginAccess): Promise<Detection>;
  /**
   * Fetches the next bounded part of the raw history: returns when done or when `budgetMs` is
   * spent (always making some progress). `onProgress` may be called often; callers throttle.
   * Throws `OriginAuthFailed` when the origin refuses the credentials (or wants some).
   */
  importRawChunk(
    job: RawJob,
    budgetMs: number,
    onProgress: (progress: RawProgress) => void,
  ): Promise<RawChunk>;
  /**
   * Authors in the raw history fetched so far; with `seen` (raw commits whose authors are already
   * recorded, `seen-history.ts`) an adapter may leave out the commits they reach.
   */
  authors(job: RawJob, seen?: readonly string[]): Promise<readonly OriginAuthor[]>;
  /**
   * Reopens a finished raw history (`workDir`, an earlier attempt's directory, before it moves to
   * a sync's attempt) to follow the origin: the following `importRawChunk` calls fetch and convert
   * only what the origin gained, and the result is the raw history a fresh import of the whole
   * origin would give, id for id. Repeated safely (a retried step may reopen twice).
   */
  reopen(workDir: string): Promise<void>;
}

/** A reopen that keeps nothing: the sync imports the whole history again (always correct, never cheap). */
export const startAfresh = (workDir: string): Promise<void> => rm(workDir, { recursive: true, force: true });

/** The origin wants credentials, or refused the ones given: the import waits for new ones. */
export class OriginAuthFailed extends Error {
  override readonly name = 'OriginAuthFailed';
}

/**
 * The origin could not be imported (unreachable, not a repository, a limit exceeded, a forbidden
 * address). The message is shown to the user: readable, and never holding a credential.
 */
export class OriginFailed extends Error {
  override readonly name = 'OriginFailed';
}

/** The network guard refused an address (private, loopback, metadata, ...), before any packet was sent. */
export class ForbiddenAddress extends OriginFailed {
  constructor(readonly address: string) {
    super('The URL points to an address the importer may not reach');
  }
}
