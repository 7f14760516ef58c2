/**
 * Source imports (spec §2.4–2.7, §3.1–3.2): the model and its pure rules. The workflow
 * (`statemachines/import.asl.json`) moves an import through these statuses; the API reads and
 * changes them only through the rules here.
 */

export const VCS_TYPES = ['git', 'subversion', 'mercurial', 'tfvc'] as const;
export type Vcs = (typeof VCS_TYPES)[number];

/** Names a client may send for `vcs`; answered with the full name (GitHub echoed `svn` as `subversion`). */
const VCS_NAMES: Readonly<Record<string, Vcs>> = {
  git: 'git',
  subversion: 'subversion',
  svn: 'subversion',
  mercurial: 'mercurial',
  hg: 'mercurial',
  tfvc: 'tfvc',
};

/** The canonical VCS for a name a client sent, or undefined when it names none. */
export const canonicalVcs = (name: string): Vcs | undefined =>
  Object.hasOwn(VCS_NAMES, name) ? VCS_NAMES[name] : undefined;

export const IMPORT_STATUSES = [
  'detecting',
  'importing',
  'mapping',
  'pushing',
  'complete',
  'auth_failed',
  'error',
  'detection_needs_auth',
  'detection_found_nothing',
  'detection_found_multiple',
] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

export const USE_LFS_VALUES = ['undecided', 'opt_in', 'opt_out'] as const;
export type UseLfs = (typeof USE_LFS_VALUES)[number];

/** The step an import failed in (GitHub's docs name the steps so). */
export type FailedStep = 'detection' | 'raw' | 'rewrite' | 'push';

/** What a paused execution waits for a person to give it (a `.waitForTaskToken` state). */
export type WaitingFor = 'credentials' | 'project_choice' | 'lfs_choice';

/** One of several projects found at a URL (`detection_found_multiple`). */
export interface ProjectChoice {
  readonly vcs: Vcs;
  readonly humanName: string;
  /** TFVC team project. */
  readonly tfvcProject?: string;
  /** Subversion: the project's root below the URL. Mercurial: the repository's path. */
  readonly path?: string;
}

/**
 * What the owner chose where an import could carry something over in more than one way (an
 * extension of `PUT …/import`; the report lists them). Absent fields take the defaults below.
 */
export interface ImportChoices {
  /**
   * Keep each empty directory (Subversion, TFVC) as a directory holding an empty placeholder file:
   * for Subversion an empty `.gitignore` (what svn-all-fast-export's `--empty-dirs` writes).
   */
  readonly keepEmptyDirectories: boolean;
  /** Keep each deleted Subversion branch or tag as the tag `backups/<name>@<revision>`. */
  readonly keepDeletedRefs: boolean;
}

export const DEFAULT_IMPORT_CHOICES: ImportChoices = Object.freeze({
  keepEmptyDirectories: false,
  keepDeletedRefs: true,
});

/** The choices an import runs with: the owner's, or the defaults for an import stored without any. */
export const choicesOf = (record: Pick<Import, 'choices'>): ImportChoices =>
  record.choices ?? DEFAULT_IMPORT_CHOICES;

/** Choices as a request sends them: each one optional. */
export type SentImportChoices = { readonly [K in keyof ImportChoices]?: ImportChoices[K] | undefined };

export const sendsChoices = (sent: SentImportChoices): boolean =>
  sent.keepEmptyDirectories !== undefined || sent.keepDeletedRefs !== undefined;

/** `base` with what the request sent instead (a field not sent keeps its value in `base`). */
export const withSentChoices = (base: ImportChoices, sent: SentImportChoices): ImportChoices => ({
  keepEmptyDirectories: sent.keepEmptyDirectories ?? base.keepEmptyDirectories,
  keepDeletedRefs: sent.keepDeletedRefs ?? base.keepDeletedRefs,
});

export interface Import {
  readonly ownerLogin: string;
  readonly repoName: string;
  /** Increases on every restart; the execution of attempt N is the only one that may write. */
  readonly attempt: number;
  /** Unique per import, never reused: authors and large files belong to it. */
  readonly importId: number;
  /** Null while detecting without a `vcs`. */
  readonly vcs: Vcs | null;
  readonly vcsUrl: string;
  readonly tfvcProject?: string;
  /** The project the owner chose after `detection_found_multiple` (the worker imports that one). */
  readonly chosenProject?: ProjectChoice;
  /** The batch this import belongs to (`import-batches.ts`), and its entry there. */
  readonly batch?: ImportBatchRef;
  readonly useLfs: UseLfs;
  /** The owner's choices (`PUT …/import`, or a `PATCH` that restarts); absent: `choicesOf`. */
  readonly choices?: ImportChoices;
  readonly status: ImportStatus;
  /**
   * How many status changes the workflow's steps have written to this import (all attempts), and
   * the last of them: what names that change (`event-identity.ts`) when a step run again announces
   * it again. Absent before the first.
   */
  readonly statusSequence?: number;
  readonly lastStatusChange?: StatusChangeRecord;
  /** Null until the raw step knows it. */
  readonly commitCount: number | null;
  /** Progress of the raw step, 0–100; null until known. */
  readonly percent: number | null;
  /** Progress of the push step, 0–100; null outside it. */
  readonly pushPercent: number | null;
  readonly failedStep?: FailedStep;
  /** Readable, never holds a credential. */
  readonly errorMessage?: string;
  readonly projectChoices?: readonly ProjectChoice[];
  readonly hasLargeFiles: boolean;
  readonly largeFilesCount: number;
  /** Total bytes of the large files (GitHub's example value is bytes although its docs say GB). */
  readonly largeFilesSize: number;
  readonly authorsCount: number;
  /** Credentials are stored sealed; the API only says whether there are any. */
  readonly hasCredentials: boolean;
  /** What the paused execution waits for, when it waits. */
  readonly waitingFor?: WaitingFor;
  /** The Step Functions task token of the paused state (never shown to clients). */
  readonly taskToken?: string;
  readonly executionArn?: string;
  /** The owner pushed commits of their own after the import: history may no longer be rewritten. */
  readonly ownerPushed: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Where an import sits in its batch. */
export interface ImportBatchRef {
  readonly id: number;
  readonly entry: number;
}

/** A status change a workflow step wrote (`Import.lastStatusChange`). */
export interface StatusChangeRecord {
  readonly attempt: number;
  readonly from: ImportStatus | null;
  readonly to: ImportStatus;
}

export interface ImportAuthor {
  readonly id: number;
  /** Identifier in the origin: `name <email>` for Git, the username@uuid for Subversion. */
  readonly remoteId: string;
  readonly remoteName: string;
  readonly email: string;
  readonly name: string;
}

export interface LargeFile {
  readonly refName: string;
  readonly path: string;
  readonly oid: string;
  readonly size: number;
}

/** The human-readable status (GitHub sent "Importing..." and "Done"). */
export function statusText(status: ImportStatus): string {
  switch (status) {
    case 'detecting':
      return 'Detecting source control...';
    case 'importing':
      return 'Importing...';
    case 'mapping':
      return 'Rewriting history...';
    case 'pushing':
      return 'Pushing...';
    case 'complete':
      return 'Done';
    case 'auth_failed':
      return 'Authentication failed: the origin needs a username and password';
    case 'error':
      return 'Import failed';
    case 'detection_needs_auth':
      return 'Detection needs a username and password';
    case 'detection_found_nothing':
      return 'No source control found at this URL';
    case 'detection_found_multiple':
      return 'Several projects found: choose one';
  }
}

/** The first status of a new or restarted import. */
export const firstStatus = (vcs: Vcs | null): ImportStatus => (vcs === null ? 'detecting' : 'importing');

/** Statuses in which the import is finished or waits for a person: no worker runs. */
export const isSettled = (status: ImportStatus): boolean =>
  status === 'complete' ||
  status === 'error' ||
  status === 'auth_failed' ||
  status === 'detection_needs_auth' ||
  status === 'detection_found_nothing' ||
  status === 'detection_found_multiple';

/** Credentials may be sent while the origin refuses the import or its detection (spec §3.1). */
export const acceptsCredentials = (status: ImportStatus): boolean =>
  status === 'auth_failed' || status === 'detection_needs_auth';

/** A project may be chosen only after detection found several (spec §3.1). */
export const acceptsProjectChoice = (status: ImportStatus): boolean => status === 'detection_found_multiple';

/**
 * Authors may be mapped, and the LFS choice made or changed, until the owner pushes commits of
 * their own (spec §3.1). After `complete`, a change rewrites the imported history and publishes it
 * again (GitHub did this).
 */
export const acceptsHistoryChanges = (record: Pick<Import, 'ownerPushed'>): boolean => !record.ownerPushed;

/**
 * The Step Functions execution name of an import attempt: readable in the console, unique per
 * attempt, within AWS's rules (1–80 of letters, digits, `.`, `-`, `_`). Logins have no `.`, so the
 * first `.` separates owner from repository. An attempt that continues in a new execution (Step
 * Functions' history limit) names its later parts `….attempt-N.part-P` (P ≥ 2).
 */
export function executionName(
  ownerLogin: string,
  repoName: string,
  attempt: number,
  kind: 'attempt' | 'sync' = 'attempt',
  part = 1,
): string {
  const suffix = `.${kind}-${attempt}${part > 1 ? `.part-${part}` : ''}`;
  const full = `${ownerLogin}.${repoName}${suffix}`;
  if (full.length <= 80) return full;
  // Long names keep their start and a short digest of the whole, so two long names stay distinct.
  const digest = fnv1a(`${ownerLogin}/${repoName}`).toString(36).padStart(7, '0').slice(0, 7);
  const room = 80 - suffix.length - digest.length - 1;
  return `${`${ownerLogin}.${repoName}`.slice(0, room)}-${digest}${suffix}`;
}

/**
 * An execution's name: `owner.repo.attempt-N`, or `owner.repo.sync-N` when attempt N syncs a
 * followed origin (attempt numbers never repeat within a repository, so neither do these names).
 */
export const executionNameOf = (input: {
  readonly owner: string;
  readonly repo: string;
  readonly attempt: number;
  readonly sync?: boolean | undefined;
  readonly part?: number | undefined;
}): string =>
  executionName(input.owner, input.repo, input.attempt, input.sync ? 'sync' : 'attempt', input.part);

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * The author a Git commit's identity becomes: the remote id is the identity itself, so the same
 * person found twice is one author.
 */
export const gitRemoteId = (name: string, email: string): string => `${name} <${email}>`;

/** Longest `vcs_username` / `vcs_password` accepted (GitHub did not say; these fit any real origin). */
export const MAX_VCS_USERNAME_LENGTH = 256;
export const MAX_VCS_PASSWORD_LENGTH = 1024;
/** Longest mapped author name and email (Git itself has no limit; these keep an item small). */
export const MAX_AUTHOR_NAME_LENGTH = 255;
export const MAX_AUTHOR_EMAIL_LENGTH = 255;

/**
 * Statuses whose Import JSON shows the raw step's `import_percent`, `percent` and `commit_count`
 * (null until known): the raw step and the steps after it that still run. `complete` does not
 * (GitHub's example of a complete import has neither), nor detection and its problem states.
 */
export const showsRawProgress = (status: ImportStatus): boolean =>
  status === 'importing' || status === 'mapping' || status === 'pushing';

/** `push_percent` is shown while pushing only (spec §2.4). */
export const showsPushProgress = (status: ImportStatus): boolean => status === 'pushing';

/**
 * The `since` query parameter of the authors list: a non-negative decimal integer (the highest
 * author id the client saw), absent for all authors. `undefined` = absent; `null` = malformed.
 */
export function parseSince(raw: string | undefined): number | undefined | null {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,16}$/.test(raw)) return null;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : null;
}

/** A mapped author email: one `@` with something either side, no spaces, brackets or controls (Git writes it inside `<>`). */
export const isAuthorEmail = (email: string): boolean =>
  email.length <= MAX_AUTHOR_EMAIL_LENGTH &&
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  /^[^\s<>@\u0000-\u001f\u007f]+@[^\s<>@\u0000-\u001f\u007f]+$/.test(email);

/** A mapped author name: non-blank, one line, no `<>` (they would end Git's name field). */
export const isAuthorName = (name: string): boolean =>
  name.length <= MAX_AUTHOR_NAME_LENGTH &&
  name.trim() !== '' &&
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  !/[<>\u0000-\u001f\u007f]/.test(name);

/** A project choice as a client sends it back (one element of `project_choices`). */
export interface SentProjectChoice {
  readonly vcs?: string | undefined;
  readonly humanName?: string | undefined;
  readonly tfvcProject?: string | undefined;
}

/**
 * The stored choice a client's choice names: same `human_name`, and the same `vcs` and
 * `tfvc_project` where the client sent them (`vcs` compared by canonical name).
 */
export function findProjectChoice(
  choices: readonly ProjectChoice[] | undefined,
  sent: SentProjectChoice,
): ProjectChoice | undefined {
  const vcs = sent.vcs === undefined ? undefined : canonicalVcs(sent.vcs);
  if (sent.vcs !== undefined && vcs === undefined) return undefined;
  return (choices ?? []).find(
    (choice) =>
      choice.humanName === sent.humanName &&
      (vcs === undefined || choice.vcs === vcs) &&
      (sent.tfvcProject === undefined || choice.tfvcProject === sent.tfvcProject),
  );
}
/**
 * The name and email a Git remote id was made from (`gitRemoteId`'s inverse). Git identities
 * cannot hold `<` in the name nor `>` in the email, so the first `<` ends the name.
 */
export function splitGitRemoteId(remoteId: string): { name: string; email: string } | undefined {
  const open = remoteId.indexOf('<');
  if (open < 1 || remoteId[open - 1] !== ' ' || !remoteId.endsWith('>')) return undefined;
  return { name: remoteId.slice(0, open - 1), email: remoteId.slice(open + 1, -1) };
}

/**
 * A name or email as a Git identity can hold it: git's own rule drops `<`, `>` and line breaks
 * (they delimit the identity in a commit) and edge whitespace; NUL ends a commit header.
 */
export const gitIdentityText = (value: string): string => value.replace(/[<>\r\n\0]/g, '').trim();
