/**
 * Source imports (spec §4.5): what each request of the import API does, over the import rules, the
 * import data and the workflow control. Only the repository's owner may see or change its import
 * (GitHub required push access; the service has no collaborators): everyone else gets 404.
 */
import { nextId } from '#data/counters';
import { markEntryCancelled } from '#data/import-batches';
import { mapAuthors } from '#data/imports/author-mappings';
import {
  getAuthor,
  getImport,
  getImportReport,
  getSealedCredentials,
  listLargeFiles,
  pageOfAuthors,
} from '#data/imports/items';
import { enterStatus } from '#data/imports/progress';
import {
  beginAttempt,
  createImport,
  deleteImport,
  deleteImportItems,
  mapAuthor,
  type NewImport,
  removeUnstartedImport,
  setExecutionArn,
  storeCredentials,
  storeProjectChoice,
  storeUseLfs,
  type TakenToken,
} from '#data/imports/requests';
import { findRevision, pageOfRevisions } from '#data/imports/revision-map';
import { foldAsciiCase, sameAsciiCaseless } from '#domain/ascii-case';
import { composeReport, type ImportReport } from '#domain/import-report';
import { mayBeInterrupted, restartResumes, sameChoices } from '#domain/import-resume';
import {
  acceptsCredentials,
  acceptsHistoryChanges,
  acceptsProjectChoice,
  canonicalVcs,
  choicesOf,
  DEFAULT_IMPORT_CHOICES,
  type FailedStep,
  findProjectChoice,
  firstStatus,
  type Import,
  type ImportAuthor,
  type LargeFile,
  parseSince,
  type SentImportChoices,
  type SentProjectChoice,
  sendsChoices,
  type UseLfs,
  type Vcs,
  withSentChoices,
} from '#domain/imports';
import { checkOriginUrl } from '#domain/origin-url';
import { type Page, type PageRequest, pageStart } from '#domain/pagination';
import type { Repository } from '#domain/repositories';
import { isOriginRevisionName, type RevisionEntry } from '#domain/revision-map';
import type { SealContext } from '#domain/sealed-secrets';
import type { SecurityEvent } from '#domain/security-log';
import { config } from '#shared/config';
import { type FieldError, HttpError, notFound, validationFailed } from '#shared/errors';
import { log } from '#shared/log';
import { SEAL_PURPOSE } from '#shared/seal-purposes';
import { removeImportFiles } from '#vcs/import-files';
import type { Caller } from './authenticate.ts';
import { importCancelled, statusChanged } from './import-events.ts';
import { noticeInterrupted } from './import-interrupted.ts';
import { authorMappedEvent, recordImportStarted } from './import-security-events.ts';
import {
  executionArnOf,
  executionEnded,
  resumeWaiting,
  type StartAt,
  startAttempt,
  stopAttempt,
} from './import-workflow.ts';
import { visibleRepository } from './repositories.ts';
import { secretSealer } from './secret-sealer.ts';
import { announceSecurityEvents, securityEventItems } from './security-log.ts';
import { announceImportOutcome } from './webhook-events.ts';

const RESOURCE = 'Import';

export interface VcsCredentials {
  readonly username: string;
  readonly password: string;
}

export const invalid = (field: string, message: string, resource = RESOURCE): HttpError =>
  validationFailed([{ resource, field, code: 'invalid', message }]);
const missing = (field: string, resource = RESOURCE): FieldError => ({
  resource,
  field,
  code: 'missing_field',
});

export const conflict = (message: string): HttpError => new HttpError(409, message);
/** StartExecution failed: nothing was started, the client may try again. */
const workflowUnavailable = (): HttpError =>
  new HttpError(503, 'The import service is unavailable; try again later');

/** The repository, when the caller owns it (and may see it with this token); 404 otherwise. */
export async function ownedRepository(caller: Caller, owner: string, name: string): Promise<Repository> {
  const { repository } = await visibleRepository(caller, owner, name);
  if (caller.kind !== 'user' || !sameAsciiCaseless(caller.user.login, repository.ownerLogin))
    throw notFound();
  return repository;
}

/** The caller's repository's import; 404 when the repository is not theirs or has no import. */
export async function ownedImport(caller: Caller, owner: string, name: string): Promise<Import> {
  // Keys fold case, so the import is read beside the access check, not after it.
  const [, record] = await Promise.all([ownedRepository(caller, owner, name), getImport(owner, name)]);
  if (!record) throw notFound();
  return record;
}

/** The seal of an import's credentials is bound to the repository and the import. */
export const credentialsContext = (owner: string, repo: string, importId: number): SealContext => ({
  purpose: SEAL_PURPOSE.importCredentials,
  subject: `${foldAsciiCase(owner)}/${foldAsciiCase(repo)}#${importId}`,
});

export const sealCredentials = (owner: string, repo: string, importId: number, credentials: VcsCredentials) =>
  secretSealer().seal(
    Buffer.from(JSON.stringify({ username: credentials.username, password: credentials.password })),
    credentialsContext(owner, repo, importId),
  );

/** The import's credentials, opened (worker side: only the worker ever reads them back). */
export async function openImportCredentials(
  owner: string,
  repo: string,
): Promise<VcsCredentials | undefined> {
  const stored = await getSealedCredentials(owner, repo);
  if (!stored) return undefined;
  const plain = await secretSealer().open(stored.sealed, credentialsContext(owner, repo, stored.importId));
  const parsed = JSON.parse(plain.toString('utf8')) as VcsCredentials;
  return { username: String(parsed.username), password: String(parsed.password) };
}

const startAtFor = (vcs: Vcs | null): StartAt => (vcs === null ? 'detect' : 'import');

/**
 * Starts the execution of the import's current attempt and records it. When StartExecution fails,
 * `onFailure` undoes what was written and the client gets 503 (nothing runs).
 */
async function launch(
  record: Pick<Import, 'ownerLogin' | 'repoName' | 'attempt'>,
  startAt: StartAt,
  onFailure: () => Promise<unknown>,
  fromAttempt?: number,
  sync?: boolean,
  originFingerprint?: string,
  resume?: boolean,
): Promise<void> {
  let arn: string;
  try {
    arn = await startAttempt({
      owner: record.ownerLogin,
      repo: record.repoName,
      attempt: record.attempt,
      startAt,
      ...(fromAttempt === undefined ? {} : { fromAttempt }),
      ...(sync ? { sync } : {}),
      ...(originFingerprint === undefined ? {} : { originFingerprint }),
      ...(resume ? { resume } : {}),
    });
  } catch (error) {
    log('error', 'StartExecution failed', {
      error: (error as Error).name,
      message: (error as Error).message,
    });
    await onFailure().catch(() => undefined);
    throw workflowUnavailable();
  }
  await setExecutionArn(record.ownerLogin, record.repoName, record.attempt, arn);
}

/** Stops an execution without failing the request: a stale execution's writes are dropped anyway. */
async function stopQuietly(executionArn: string | undefined, cause: string): Promise<void> {
  await stopAttempt(executionArn, cause).catch((error: unknown) =>
    log('warn', 'StopExecution failed', { error: (error as Error).name, executionArn }),
  );
}

/** Re-reads the import and runs `step` until it returns a value (the import changed under it otherwise). */
export async function withFreshImport<T>(
  owner: string,
  repo: string,
  first: Import,
  step: (record: Import) => Promise<T | undefined>,
): Promise<T> {
  let record: Import | undefined = first;
  for (let n = 0; n < 10 && record; n++) {
    const result = await step(record);
    if (result !== undefined) return result;
    record = await getImport(owner, repo);
  }
  if (!record) throw notFound();
  throw conflict('The import changed while it was being updated; try again');
}

// ---- Start --------------------------------------------------------------------------------

export interface StartInput {
  readonly vcsUrl: string;
  readonly vcs?: string | undefined;
  readonly vcsUsername?: string | undefined;
  readonly vcsPassword?: string | undefined;
  readonly tfvcProject?: string | undefined;
  /** The owner's choices (extension fields); those not sent take `DEFAULT_IMPORT_CHOICES`. */
  readonly choices: SentImportChoices;
}

/**
 * PUT /repos/:owner/:repo/import. The repository must be the caller's, empty and without an
 * import (409 otherwise); `vcs_url` is checked before any network use. Credentials are stored
 * sealed. The first attempt's execution starts detection without `vcs`, the raw import with it.
 */
export async function startImport(
  caller: Caller,
  owner: string,
  name: string,
  input: StartInput,
): Promise<Import> {
  const repository = await ownedRepository(caller, owner, name);
  const vcs = input.vcs === undefined ? null : canonicalVcs(input.vcs);
  if (vcs === undefined) throw invalid('vcs', 'vcs must be one of subversion, git, mercurial, tfvc');
  const missingCredential = [
    ...(input.vcsUsername === undefined && input.vcsPassword !== undefined ? [missing('vcs_username')] : []),
    ...(input.vcsPassword === undefined && input.vcsUsername !== undefined ? [missing('vcs_password')] : []),
  ];
  if (missingCredential.length > 0) throw validationFailed(missingCredential);
  const url = checkOriginUrl(input.vcsUrl, vcs, config().originAllowedAddresses);
  if (!url.ok) throw invalid('vcs_url', url.message);

  const { ownerLogin, name: repoName } = repository;
  if (await getImport(ownerLogin, repoName)) throw conflict('An import already exists for this repository');
  if (repository.hasContent) throw conflict('The repository is not empty: imports need an empty repository');

  const importId = await nextId('import');
  const sealedCredentials =
    input.vcsUsername !== undefined && input.vcsPassword !== undefined
      ? await sealCredentials(ownerLogin, repoName, importId, {
          username: input.vcsUsername,
          password: input.vcsPassword,
        })
      : undefined;
  return launchNewImport({
    ownerLogin,
    repoName,
    importId,
    vcs,
    vcsUrl: input.vcsUrl,
    tfvcProject: input.tfvcProject,
    status: firstStatus(vcs),
    choices: withSentChoices(DEFAULT_IMPORT_CHOICES, input.choices),
    sealedCredentials,
  });
}

/**
 * Creates an import checked by the caller (its URL, its repository's owner) and starts its first
 * attempt: 409 when the repository has an import or content, 503 when the workflow did not start
 * (then nothing stays). Shared by `PUT …/import` and a batch's entries.
 */
export async function launchNewImport(input: NewImport): Promise<Import> {
  const { ownerLogin, repoName, importId } = input;
  const created = await createImport(input);
  if (created.kind === 'import-exists') throw conflict('An import already exists for this repository');
  if (created.kind === 'repository-refused')
    throw conflict(
      'The repository changed meanwhile (it has content, or an import was cancelled); try again',
    );
  const record = created.record;
  // Each status change is published after its write and before the execution that moves it on starts.
  await statusChanged(ownerLogin, repoName, null);
  await launch(record, startAtFor(input.vcs), async () => {
    await removeUnstartedImport(ownerLogin, repoName, importId);
    await importCancelled(record);
  });
  await recordImportStarted(record);
  return (await getImport(ownerLogin, repoName)) ?? record;
}

// ---- Read ---------------------------------------------------------------------------------

/**
 * GET /repos/:owner/:repo/import: one strongly consistent read of the import item; an import in
 * progress that has been quiet a while and whose execution ended without a word reads as `error`.
 */
export const importProgress = async (caller: Caller, owner: string, name: string): Promise<Import> =>
  noticeInterrupted(await ownedImport(caller, owner, name));

// ---- Update -------------------------------------------------------------------------------

export interface UpdateInput {
  readonly vcsUsername?: string | undefined;
  readonly vcsPassword?: string | undefined;
  readonly vcs?: string | undefined;
  readonly tfvcProject?: string | undefined;
  readonly humanName?: string | undefined;
  /** Only with a restart (no other field): the import restarts with these choices changed. */
  readonly choices?: SentImportChoices;
}

export interface Updated {
  readonly record: Import;
  /** The import was restarted (GitHub's docs answer that with a Location header). */
  readonly restarted: boolean;
}

/**
 * PATCH /repos/:owner/:repo/import, one of three things (spec §4.5): credentials while the origin
 * refuses the import or its detection; one of `project_choices` after detection found several; or
 * nothing at all, which restarts the import. The owner's choices (an extension) may come with a
 * restart only: the import restarts with them. Anything else is 422.
 */
export async function updateImport(
  caller: Caller,
  owner: string,
  name: string,
  input: UpdateInput,
): Promise<Updated> {
  const first = await ownedImport(caller, owner, name);
  const { ownerLogin, repoName } = first;
  const sent = input.choices ?? {};
  const restartFields = ['vcsUsername', 'vcsPassword', 'vcs', 'tfvcProject', 'humanName'] as const;
  if (sendsChoices(sent) && restartFields.some((field) => input[field] !== undefined))
    throw invalid(
      sent.keepEmptyDirectories === undefined ? 'keep_refs_deleted_in_history' : 'keep_empty_directories',
      'Choices change only with a restart: send them without credentials or a project choice',
    );
  if (input.vcsUsername !== undefined || input.vcsPassword !== undefined) {
    const problems = [
      ...(input.vcsUsername === undefined ? [missing('vcs_username')] : []),
      ...(input.vcsPassword === undefined ? [missing('vcs_password')] : []),
    ];
    if (problems.length > 0) throw validationFailed(problems);
    const credentials = { username: input.vcsUsername ?? '', password: input.vcsPassword ?? '' };
    await withFreshImport(ownerLogin, repoName, first, async (record) => {
      if (!acceptsCredentials(record.status))
        throw invalid('vcs_username', `The import does not wait for credentials (status ${record.status})`);
      const sealed = await sealCredentials(ownerLogin, repoName, record.importId, credentials);
      const taken = await storeCredentials(ownerLogin, repoName, record, sealed);
      if (taken === false) return undefined;
      await statusChanged(ownerLogin, repoName, record.status);
      await resumeOrRelaunch(record, { ...record, status: 'detecting' }, taken, 'detect');
      return true;
    });
    return { record: await currentImport(ownerLogin, repoName), restarted: false };
  }
  if (input.vcs !== undefined || input.humanName !== undefined || input.tfvcProject !== undefined) {
    if (input.humanName === undefined) throw validationFailed([missing('human_name')]);
    const sent: SentProjectChoice = {
      vcs: input.vcs,
      humanName: input.humanName,
      tfvcProject: input.tfvcProject,
    };
    await withFreshImport(ownerLogin, repoName, first, async (record) => {
      if (!acceptsProjectChoice(record.status))
        throw invalid(
          'human_name',
          `The import does not wait for a project choice (status ${record.status})`,
        );
      const choice = findProjectChoice(record.projectChoices, sent);
      if (!choice) throw invalid('human_name', 'human_name names none of the project_choices');
      const taken = await storeProjectChoice(ownerLogin, repoName, record, choice);
      if (taken === false) return undefined;
      await statusChanged(ownerLogin, repoName, record.status);
      await resumeOrRelaunch(record, { ...record, status: 'importing' }, taken, 'import');
      return true;
    });
    return { record: await currentImport(ownerLogin, repoName), restarted: false };
  }
  await withFreshImport(ownerLogin, repoName, first, (record) => restart(record, sent));
  return { record: await currentImport(ownerLogin, repoName), restarted: true };
}

async function currentImport(owner: string, repo: string): Promise<Import> {
  const record = await getImport(owner, repo);
  if (!record) throw notFound();
  return record;
}

/**
 * After a change that took a paused execution's task token: resume it; without a paused execution
 * (it ended, or never reached its waiting state), begin a new attempt at `startAt` instead.
 */
async function resumeOrRelaunch(
  before: Import,
  after: Pick<Import, 'attempt' | 'status'>,
  taken: TakenToken,
  startAt: StartAt,
): Promise<void> {
  if (taken.taskToken) {
    // A paused execution that cannot be resumed (Step Functions refused or failed) is replaced by
    // a new attempt rather than left waiting for a token nobody holds any more.
    const resumed = await resumeWaiting(taken.taskToken).then(
      () => true,
      (error: unknown) => {
        log('warn', 'SendTaskSuccess failed; starting a new attempt', { error: (error as Error).name });
        return false;
      },
    );
    if (resumed) return;
  }
  if (!(await beginAttempt(before.ownerLogin, before.repoName, after, after.status))) return;
  await stopQuietly(taken.executionArn ?? executionArnOf(before), 'the import resumed in a new attempt');
  await launch({ ...before, attempt: before.attempt + 1 }, startAt, () =>
    markUnstarted(before, before.attempt + 1),
  );
}

/** A restart or republish whose execution could not start is left in `error`, not running forever. */
async function markUnstarted(
  record: Import,
  attempt: number,
  step?: FailedStep,
  sync?: boolean,
): Promise<void> {
  const before = await getImport(record.ownerLogin, record.repoName);
  const written = await enterStatus(record.ownerLogin, record.repoName, attempt, 'error', {
    failedStep: step ?? (record.vcs === null ? 'detection' : 'raw'),
    errorMessage: 'The import could not be started; restart it',
  });
  if (written && before)
    await statusChanged(record.ownerLogin, record.repoName, before.status, { attempt, sync }, written);
}

/**
 * Restart: stop the running execution, begin the next attempt from the first status (with the
 * choices the owner sent changed), start it. An attempt that failed or was interrupted, restarted
 * with the same choices, is resumed: the new attempt continues from its raw history
 * (`import-resume.ts`); otherwise the import starts over.
 */
async function restart(record: Import, sent: SentImportChoices): Promise<true | undefined> {
  if (!acceptsHistoryChanges(record))
    throw invalid('status', 'The repository has commits of its own since the import: it cannot be restarted');
  const choices = sendsChoices(sent) ? withSentChoices(choicesOf(record), sent) : undefined;
  const choicesChange = choices !== undefined && !sameChoices(choices, choicesOf(record));
  // Unknown (Step Functions did not answer) counts as still running: the import starts over.
  const ended = mayBeInterrupted(record.status)
    ? await executionEnded(executionArnOf(record)).catch((error: unknown) => {
        log('warn', 'DescribeExecution failed; the restart starts over', { error: (error as Error).name });
        return false;
      })
    : true;
  const resume = restartResumes(record, choicesChange, ended);
  const begun = await beginAttempt(
    record.ownerLogin,
    record.repoName,
    record,
    firstStatus(record.vcs),
    choices,
  );
  if (!begun) return undefined;
  await statusChanged(record.ownerLogin, record.repoName, record.status, {}, begun);
  await stopQuietly(executionArnOf(record), 'the import was restarted');
  await launch(
    { ...record, attempt: record.attempt + 1 },
    startAtFor(record.vcs),
    () => markUnstarted(record, record.attempt + 1),
    resume ? record.attempt : undefined,
    undefined,
    undefined,
    resume,
  );
  return true;
}

/** A complete import whose history changed is rewritten and pushed again from its raw history. */
export async function republish(record: Import): Promise<void> {
  const next = { ...record, attempt: record.attempt + 1 };
  await launch(next, 'rewrite', () => markUnstarted(record, next.attempt, 'rewrite'), record.attempt);
}

/**
 * After Complete wrote `complete`: when an author mapping was written after the rewrite read the
 * authors (the import's `mappingVersion` is not the one the rewrite read before them), the import
 * is rewritten and pushed once more, so that a mapping sent while a rewrite ran is never lost.
 * A mapping written after `complete` starts its own rewrite: this one then loses its condition.
 */
export async function republishIfMappingsChanged(
  owner: string,
  repo: string,
  attempt: number,
  versionRewritten: number,
): Promise<boolean> {
  const record = await getImport(owner, repo);
  if (!record || record.attempt !== attempt || record.status !== 'complete') return false;
  if ((record.mappingVersion ?? 0) === versionRewritten) return false;
  if ((await mapAuthors(owner, repo, record, [], true)) !== 'ok') return false;
  log('info', 'author mappings changed during the rewrite: rewriting again', { owner, repo, attempt });
  await statusChanged(owner, repo, record.status);
  await republish(record);
  return true;
}

/**
 * A sync of a followed origin: the next attempt of a complete (or failed) import, from its raw
 * import, in the same workflow (named `owner.repo.sync-N`). False when the import changed meanwhile.
 */
export async function beginSyncAttempt(record: Import, originFingerprint?: string): Promise<boolean> {
  const begun = await beginAttempt(
    record.ownerLogin,
    record.repoName,
    record,
    firstStatus(record.vcs),
    undefined,
    true,
  );
  if (!begun) return false;
  const next = { ...record, attempt: record.attempt + 1 };
  await statusChanged(
    record.ownerLogin,
    record.repoName,
    record.status,
    { attempt: next.attempt, sync: true },
    begun,
  );
  // The attempt before keeps the raw history and the adapter's state: the sync fetches what is new.
  await launch(
    next,
    startAtFor(record.vcs),
    () => markUnstarted(record, next.attempt, undefined, true),
    record.attempt,
    true,
    originFingerprint,
  );
  return true;
}

// ---- Cancel -------------------------------------------------------------------------------

/**
 * DELETE /repos/:owner/:repo/import: the execution is stopped, then the import item goes (so the
 * running step's later writes are dropped), then the import's authors, large files, working
 * directories and (unless the owner pushed work of their own) the hosted repository are removed.
 * Stopped first so that the execution ends `ABORTED` in the console: with the item gone first, a
 * step that wrote next failed its condition and could end the execution `FAILED` before the stop.
 */
export async function cancelImport(caller: Caller, owner: string, name: string): Promise<void> {
  const first = await ownedImport(caller, owner, name);
  const { ownerLogin, repoName } = first;
  const cancelled = await withFreshImport(ownerLogin, repoName, first, async (record) => {
    if (record.batch) await markEntryCancelled(ownerLogin, record.batch.id, record.batch.entry);
    await stopQuietly(executionArnOf(record), 'the import was cancelled');
    const outcome = await deleteImport(ownerLogin, repoName, record, !record.ownerPushed);
    if (outcome === 'gone') throw notFound();
    return outcome === 'ok' ? record : undefined;
  });
  await importCancelled(cancelled);
  await announceImportOutcome(
    { owner: ownerLogin, repo: repoName, importId: cancelled.importId, attempt: cancelled.attempt },
    'cancelled',
  );
  await Promise.all([
    deleteImportItems(ownerLogin, repoName, cancelled.importId),
    removeImportFiles(config(), ownerLogin, repoName, { emptyRepository: !cancelled.ownerPushed }),
  ]).catch((error: unknown) =>
    log('warn', 'cleaning up a cancelled import failed', { error: (error as Error).message }),
  );
}

// ---- Authors ------------------------------------------------------------------------------

/**
 * GET …/import/authors?since=: one page of the authors with an id above `since`, ascending, and
 * how many there are: an import can have tens of thousands, more than one answer can carry.
 */
export async function importAuthors(
  caller: Caller,
  owner: string,
  name: string,
  since: string | undefined,
  page: PageRequest,
): Promise<{ record: Import; authors: Page<ImportAuthor> }> {
  const after = parseSince(since);
  if (after === null) throw invalid('since', 'since must be a non-negative integer (an author id)');
  const record = await ownedImport(caller, owner, name);
  const { ownerLogin, repoName, importId } = record;
  const { authors, total } = await pageOfAuthors(
    ownerLogin,
    repoName,
    importId,
    after,
    pageStart(page),
    page.perPage,
  );
  return { record, authors: { items: authors, total } };
}

// ---- Revision map -------------------------------------------------------------------------

/** GET …/import/revisions: one page of the revision map in origin order, and its length. */
export async function importRevisions(
  caller: Caller,
  owner: string,
  name: string,
  page: PageRequest,
): Promise<{ record: Import; revisions: Page<RevisionEntry> }> {
  const record = await ownedImport(caller, owner, name);
  const { entries, total } = await pageOfRevisions(
    record.ownerLogin,
    record.repoName,
    record.importId,
    pageStart(page),
    page.perPage,
  );
  return { record, revisions: { items: entries, total } };
}

/** GET …/import/revisions/:origin_revision: the commit it was published as; 404 when not in the map. */
export async function importRevision(
  caller: Caller,
  owner: string,
  name: string,
  originRevision: string,
): Promise<{ record: Import; revision: RevisionEntry }> {
  const record = await ownedImport(caller, owner, name);
  const commit = isOriginRevisionName(originRevision)
    ? await findRevision(record.ownerLogin, record.repoName, record.importId, originRevision)
    : undefined;
  if (commit === undefined) throw notFound();
  return { record, revision: { originRevision, commit } };
}

export interface AuthorChanges {
  readonly name?: string | undefined;
  readonly email?: string | undefined;
}

/**
 * PATCH …/import/authors/:author_id: maps an author until the owner pushes commits of their own
 * (422 after). Mapping after `complete` rewrites the history and pushes it again.
 */
export async function mapImportAuthor(
  caller: Caller,
  owner: string,
  name: string,
  authorId: number,
  changes: AuthorChanges,
): Promise<{ record: Import; author: ImportAuthor }> {
  if (changes.name === undefined && changes.email === undefined)
    throw validationFailed([missing('name', 'ImportAuthor'), missing('email', 'ImportAuthor')]);
  const first = await ownedImport(caller, owner, name);
  const { ownerLogin, repoName } = first;
  // As it was, so that a mapping sent again (a retry) that changes nothing is no event.
  const before = await getAuthor(ownerLogin, repoName, first.importId, authorId);
  let event: SecurityEvent | undefined;
  const mapped = await withFreshImport(ownerLogin, repoName, first, async (record) => {
    if (!acceptsHistoryChanges(record))
      throw invalid(
        'status',
        'The repository has commits of its own since the import: authors can no longer be mapped',
      );
    const republishing = record.status === 'complete';
    // A change is an event, written with it; the same values sent again (a retry) are none.
    const after = before && {
      ...before,
      name: changes.name ?? before.name,
      email: changes.email ?? before.email,
    };
    event =
      after && (after.name !== before.name || after.email !== before.email)
        ? await authorMappedEvent(record, after)
        : undefined;
    const along = event ? securityEventItems(event) : [];
    const outcome = await mapAuthor(ownerLogin, repoName, record, authorId, changes, republishing, along);
    if (outcome === 'no-author') throw notFound();
    if (outcome === 'import-changed') return undefined;
    if (republishing) await statusChanged(ownerLogin, repoName, record.status);
    if (republishing) await republish(record);
    return record;
  });
  const author = await getAuthor(ownerLogin, repoName, mapped.importId, authorId);
  if (!author) throw notFound();
  if (event) await announceSecurityEvents([event]);
  return { record: mapped, author };
}

// ---- LFS ----------------------------------------------------------------------------------

/**
 * PATCH …/import/lfs: stores the choice until the owner pushes commits of their own (422 after).
 * A paused execution waiting for it resumes; a complete import with large files whose choice
 * changed is rewritten and pushed again.
 */
export async function setLfsPreference(
  caller: Caller,
  owner: string,
  name: string,
  useLfs: Exclude<UseLfs, 'undecided'>,
): Promise<Import> {
  const first = await ownedImport(caller, owner, name);
  const { ownerLogin, repoName } = first;
  await withFreshImport(ownerLogin, repoName, first, async (record) => {
    if (!acceptsHistoryChanges(record))
      throw invalid(
        'use_lfs',
        'The repository has commits of its own since the import: the LFS choice is final',
      );
    const how =
      record.waitingFor === 'lfs_choice'
        ? 'resume'
        : record.status === 'complete' && record.hasLargeFiles && record.useLfs !== useLfs
          ? 'republish'
          : 'store';
    const taken = await storeUseLfs(ownerLogin, repoName, record, useLfs, how);
    if (taken === false) return undefined;
    await statusChanged(ownerLogin, repoName, record.status);
    if (how === 'resume') await resumeOrRelaunch(record, record, taken, startAtFor(record.vcs));
    if (how === 'republish') await republish(record);
    return true;
  });
  return currentImport(ownerLogin, repoName);
}

/** GET …/import/large_files. */
export async function importLargeFiles(
  caller: Caller,
  owner: string,
  name: string,
): Promise<{ record: Import; files: LargeFile[] }> {
  const record = await ownedImport(caller, owner, name);
  return { record, files: await listLargeFiles(record.ownerLogin, record.repoName, record.importId) };
}

// ---- Report -------------------------------------------------------------------------------

/** GET …/import/report: what the import could not carry over as it was, as far as it got. */
export async function importReport(caller: Caller, owner: string, name: string): Promise<ImportReport> {
  const record = await ownedImport(caller, owner, name);
  const { ownerLogin, repoName, importId } = record;
  const [stored, files] = await Promise.all([
    getImportReport(ownerLogin, repoName, importId),
    listLargeFiles(ownerLogin, repoName, importId),
  ]);
  return composeReport(record, stored, files);
}
