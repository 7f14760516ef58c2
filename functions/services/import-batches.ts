/**
 * Batches of imports (issue 37, an extension of the import API): what each request of
 * `/user/import-batches` does (the queue that moves a batch on is `import-batch-queue.ts`). Every import of a batch is an ordinary import made and driven by the
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
import { nextIds } from '#data/counters';
import {
  cancelQueuedEntry,
  createBatch,
  getBatch,
  joinBatch,
  listBatches,
  listEntries,
  type NewBatchEntry,
  releaseSlot,
  setBatchFollow,
  takenRepositoryNames,
} from '#data/import-batches';
import { getImport } from '#data/imports/items';
import { getImportSync } from '#data/imports/sync';
import {
  type BatchEntry,
  type BatchEntrySpec,
  type BatchFollow,
  batchConcurrency,
  derivedRepositoryName,
  type EntryProblem,
  type ImportBatch,
  MAX_BATCH_ENTRIES,
  nameProblems,
  projectChoiceOf,
} from '#domain/import-batches';
import { type ImportSync, SYNC_OFF } from '#domain/import-sync';
import {
  canonicalVcs,
  DEFAULT_IMPORT_CHOICES,
  type Import,
  type ProjectChoice,
  type SentImportChoices,
  type UseLfs,
  withSentChoices,
} from '#domain/imports';
import { checkOriginUrl } from '#domain/origin-url';
import { type Page, type PageRequest, pageOf } from '#domain/pagination';
import { config } from '#shared/config';
import { type FieldError, HttpError, notFound, validationFailed } from '#shared/errors';
import { type Caller, callerHasScope } from './authenticate.ts';
import { startQueuedEntries } from './import-batch-queue.ts';
import { cutOverImport, followImportOrigin, syncNow } from './import-sync.ts';
import {
  cancelImport,
  importProgress,
  openImportCredentials,
  sealCredentials,
  updateImport,
  type VcsCredentials,
} from './imports.ts';

const RESOURCE = 'ImportBatch';

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

const entryError = (problem: EntryProblem): FieldError => ({
  resource: RESOURCE,
  field: `imports[${problem.index}].${problem.field}`,
  code: problem.code,
  message: problem.message,
});

const invalid = (field: string, message: string): HttpError =>
  validationFailed([{ resource: RESOURCE, field, code: 'invalid', message }]);

/** The caller's login; batches are a user's (an app's token acts for its user). */
function loginOf(caller: Caller): string {
  if (caller.kind !== 'user') throw notFound();
  return caller.user.login;
}

interface Plan {
  readonly specs: BatchEntrySpec[];
  readonly problems: EntryProblem[];
  /** The import the batch is made from, and the project it takes. */
  readonly from?: { readonly record: Import; readonly choice: ProjectChoice };
}

/** The entries of form (a): projects of one origin, named as detection names them. */
function projectEntries(source: Extract<BatchSource, { kind: 'projects' }>): Plan {
  const problems: EntryProblem[] = [];
  const vcs = canonicalVcs(source.vcs);
  if (vcs === undefined || vcs === 'git')
    throw invalid('vcs', 'vcs must be subversion, mercurial or tfvc for an origin of several projects');
  const url = checkOriginUrl(source.vcsUrl, vcs, config().originAllowedAddresses);
  if (!url.ok) throw invalid('vcs_url', url.message);
  const specs = source.projects.map((named, index): BatchEntrySpec => {
    const project = projectChoiceOf(vcs, named.name);
    if (!project)
      problems.push({
        index,
        field: 'project',
        code: 'invalid',
        message: `${named.name} names no ${vcs} project`,
      });
    return {
      index,
      repository: named.repository ?? derivedRepositoryName(named.name),
      vcs,
      vcsUrl: source.vcsUrl,
      project,
      tfvcProject: project?.tfvcProject,
    };
  });
  return { specs, problems };
}

/** The entries of form (b): one import per origin. */
function originEntries(source: Extract<BatchSource, { kind: 'origins' }>): Plan {
  const problems: EntryProblem[] = [];
  const specs = source.origins.map((origin, index): BatchEntrySpec => {
    const vcs = origin.vcs === undefined ? null : canonicalVcs(origin.vcs);
    if (vcs === undefined)
      problems.push({
        index,
        field: 'vcs',
        code: 'invalid',
        message: 'vcs must be one of subversion, git, mercurial, tfvc',
      });
    const url = checkOriginUrl(origin.vcsUrl, vcs ?? null, config().originAllowedAddresses);
    if (!url.ok) problems.push({ index, field: 'vcs_url', code: 'invalid', message: url.message });
    return {
      index,
      repository: origin.repository ?? derivedRepositoryName(origin.tfvcProject ?? origin.vcsUrl),
      vcs: vcs ?? null,
      vcsUrl: origin.vcsUrl,
      tfvcProject: origin.tfvcProject,
    };
  });
  return { specs, problems };
}

/**
 * The entries of a batch made from an import waiting in `detection_found_multiple`: the projects
 * named (all of its `project_choices` when none are), the first into the import's own repository.
 */
async function fromImportEntries(
  caller: Caller,
  source: Extract<BatchSource, { kind: 'from-import' }>,
): Promise<Plan> {
  const problems: EntryProblem[] = [];
  const record = await importProgress(caller, source.owner, source.repo);
  if (record.status !== 'detection_found_multiple' || !record.projectChoices?.length)
    throw invalid(
      'from_import',
      `The import does not wait for a project choice (status ${record.status}); a batch is made from an import in detection_found_multiple`,
    );
  const offered = record.projectChoices;
  const named: readonly NamedProject[] =
    source.projects ?? offered.map((choice) => ({ name: choice.humanName }));
  const chosen = named.map((project, index) => {
    const choice = offered.find((offer) => offer.humanName === project.name);
    if (!choice)
      problems.push({
        index,
        field: 'project',
        code: 'invalid',
        message: `${project.name} is none of the import's project_choices`,
      });
    return choice;
  });
  const specs = named.map(
    (project, index): BatchEntrySpec => ({
      index,
      repository: index === 0 ? record.repoName : (project.repository ?? derivedRepositoryName(project.name)),
      vcs: chosen[index]?.vcs ?? null,
      vcsUrl: record.vcsUrl,
      project: chosen[index],
      tfvcProject: chosen[index]?.tfvcProject,
    }),
  );
  const first = chosen[0];
  return { specs, problems, ...(first ? { from: { record, choice: first } } : {}) };
}

const planOf = (caller: Caller, source: BatchSource): Promise<Plan> | Plan =>
  source.kind === 'projects'
    ? projectEntries(source)
    : source.kind === 'origins'
      ? originEntries(source)
      : fromImportEntries(caller, source);

/**
 * Every problem of the plan's names, with the database's answer on which are taken (the import a
 * batch is made from keeps its own repository). Throws 422 naming each bad entry.
 */
async function checkNames(owner: string, plan: Plan): Promise<BatchEntrySpec[]> {
  const { specs, from } = plan;
  if (specs.length === 0)
    throw validationFailed([
      {
        resource: RESOURCE,
        field: 'imports',
        code: 'missing_field',
        message: 'a batch needs at least one project or origin',
      },
    ]);
  if (specs.length > MAX_BATCH_ENTRIES)
    throw invalid('imports', `a batch holds at most ${MAX_BATCH_ENTRIES} imports; make several batches`);
  const problems = [...plan.problems, ...nameProblems(specs)];
  const fresh = specs.filter((spec) => !(from && spec.index === 0));
  const badName = new Set(problems.filter((p) => p.field === 'repository').map((p) => p.index));
  const taken = await takenRepositoryNames(
    owner,
    fresh.filter((spec) => !badName.has(spec.index)).map((spec) => spec.repository),
  );
  for (const spec of fresh)
    if (taken.has(spec.repository))
      problems.push({
        index: spec.index,
        field: 'repository',
        code: 'already_exists',
        message: `${spec.repository} already exists on this account`,
      });
  if (problems.length > 0)
    throw validationFailed([...problems].sort((a, b) => a.index - b.index).map(entryError));
  return fresh;
}

/**
 * POST /user/import-batches: every entry is checked (its origin URL, its project, its repository's
 * name: valid, unique in the request, not taken) before anything is written; then every
 * repository and entry is created, and the first `concurrency` imports start.
 */
export async function createImportBatch(caller: Caller, input: NewBatchInput): Promise<BatchView> {
  const owner = loginOf(caller);
  if (input.private && !callerHasScope(caller, ['repo'])) throw notFound();
  if ((input.vcsUsername === undefined) !== (input.vcsPassword === undefined))
    throw validationFailed([
      {
        resource: RESOURCE,
        field: input.vcsUsername === undefined ? 'vcs_username' : 'vcs_password',
        code: 'missing_field',
      },
    ]);
  const plan = await planOf(caller, input.source);
  const fresh = await checkNames(owner, plan);
  const { from } = plan;
  const credentials: VcsCredentials | undefined =
    input.vcsUsername !== undefined && input.vcsPassword !== undefined
      ? { username: input.vcsUsername, password: input.vcsPassword }
      : from?.record.hasCredentials
        ? await openImportCredentials(from.record.ownerLogin, from.record.repoName)
        : undefined;
  const importIds = await nextIds('import', fresh.length);
  const ids = new Map(fresh.map((spec, n) => [spec.index, importIds[n] ?? 0]));
  const entries = await Promise.all(
    plan.specs.map(async (spec): Promise<NewBatchEntry> => {
      if (from && spec.index === 0) return { ...spec, importId: from.record.importId, started: true };
      const importId = ids.get(spec.index) ?? 0;
      // Sealed to the import it will be (the starter copies it as it is: no key needed there).
      const sealed = credentials
        ? await sealCredentials(owner, spec.repository, importId, credentials)
        : undefined;
      return { ...spec, importId, sealedCredentials: sealed };
    }),
  );
  const created = await createBatch({
    ownerLogin: owner,
    options: {
      useLfs: input.useLfs ?? 'undecided',
      choices: withSentChoices(DEFAULT_IMPORT_CHOICES, input.choices),
      private: input.private === true,
      follow: input.follow ?? null,
      concurrency: batchConcurrency(input.concurrency, config().importBatchConcurrency),
    },
    hasCredentials: credentials !== undefined,
    entries,
    ...(from ? { fromImport: `${from.record.ownerLogin}/${from.record.repoName}` } : {}),
  });
  if (created.kind === 'taken')
    throw validationFailed(
      created.indexes.map((index) =>
        entryError({
          index,
          field: 'repository',
          code: 'already_exists',
          message: 'the name was taken meanwhile',
        }),
      ),
    );
  const batch = created.batch;
  if (from) await chooseFirstProject(caller, batch.id, from);
  await startQueuedEntries(owner, batch.id);
  return viewOf(owner, batch.id);
}

/** The import a batch is made from joins it and takes its first project, as `PATCH …/import` would. */
async function chooseFirstProject(
  caller: Caller,
  batchId: number,
  from: NonNullable<Plan['from']>,
): Promise<void> {
  const { ownerLogin, repoName, importId } = from.record;
  await joinBatch(ownerLogin, repoName, importId, { id: batchId, entry: 0 });
  try {
    await updateImport(caller, ownerLogin, repoName, {
      vcs: from.choice.vcs,
      humanName: from.choice.humanName,
      tfvcProject: from.choice.tfvcProject,
    });
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    await releaseSlot(ownerLogin, batchId, 0, error.message);
  }
}

/** The batch and its entries, each with its import and sync resource once it has an import. */
async function viewOf(owner: string, batchId: number): Promise<BatchView> {
  const [batch, entries] = await Promise.all([getBatch(owner, batchId), listEntries(owner, batchId)]);
  if (!batch) throw notFound();
  const views = await Promise.all(
    entries.map(async (entry): Promise<BatchEntryView> => {
      if (entry.state !== 'started') return { entry };
      const record = await getImport(owner, entry.repository);
      if (!record || record.importId !== entry.importId) return { entry };
      const sync = (await getImportSync(owner, entry.repository, record.importId)) ?? SYNC_OFF;
      return { entry, record, sync };
    }),
  );
  return { batch, entries: views };
}

/** GET /user/import-batches/:batch_id: the batch, its entries, their imports and sync resources. */
export async function importBatch(caller: Caller, batchId: number): Promise<BatchView> {
  return viewOf(loginOf(caller), batchId);
}

/** GET /user/import-batches: the caller's batches, newest first, one page (no entries). */
export async function listImportBatches(caller: Caller, page: PageRequest): Promise<Page<ImportBatch>> {
  const all = await listBatches(loginOf(caller));
  return { items: pageOf(all, page), total: all.length };
}

type EntryAction = (
  entry: BatchEntry,
  record: Import | undefined,
  sync: ImportSync | undefined,
) => Promise<EntryOutcome['outcome']>;

/** Runs `act` on each entry, one at a time; one entry's refusal is its outcome and stops nothing. */
async function onEach(owner: string, batchId: number, act: EntryAction): Promise<BatchActionResult> {
  const before = await viewOf(owner, batchId);
  const outcomes: EntryOutcome[] = [];
  for (const { entry, record, sync } of before.entries) {
    const base = { index: entry.index, repository: entry.repository };
    try {
      outcomes.push({ ...base, outcome: await act(entry, record, sync) });
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      outcomes.push({ ...base, outcome: 'failed', status: error.status, message: error.message });
    }
  }
  return { view: await viewOf(owner, batchId), outcomes };
}

/** DELETE /user/import-batches/:batch_id: cancels every import not complete; queued entries never start. */
export async function cancelImportBatch(caller: Caller, batchId: number): Promise<BatchActionResult> {
  const owner = loginOf(caller);
  if (!(await getBatch(owner, batchId))) throw notFound();
  // Queued entries first, so that no import settling meanwhile starts one of them.
  const cancelled = new Set<number>();
  for (const entry of await listEntries(owner, batchId))
    if (entry.state === 'queued' && (await cancelQueuedEntry(owner, batchId, entry.index)))
      cancelled.add(entry.index);
  return onEach(owner, batchId, async (entry, record) => {
    if (cancelled.has(entry.index)) return 'done';
    if (!record || record.status === 'complete') return 'skipped';
    await cancelImport(caller, owner, entry.repository);
    await releaseSlot(owner, batchId, entry.index);
    return 'done';
  });
}

/**
 * PUT …/:batch_id/sync: every complete import follows its origin with this interval (or changes
 * it); those not complete yet follow once they complete (the batch remembers the interval).
 */
export async function followImportBatch(
  caller: Caller,
  batchId: number,
  intervalMinutes: number | null,
): Promise<BatchActionResult> {
  const owner = loginOf(caller);
  if (!(await getBatch(owner, batchId))) throw notFound();
  await setBatchFollow(owner, batchId, { intervalMinutes });
  return onEach(owner, batchId, async (entry, record, sync) => {
    if (!record || sync?.state === 'cut_over') return 'skipped';
    if (record.status !== 'complete' && sync?.state !== 'following') return 'skipped';
    await followImportOrigin(caller, owner, entry.repository, intervalMinutes);
    return 'done';
  });
}

/** POST …/:batch_id/sync: syncs every following import now. */
export async function syncImportBatch(caller: Caller, batchId: number): Promise<BatchActionResult> {
  const owner = loginOf(caller);
  return onEach(owner, batchId, async (entry, record, sync) => {
    if (!record || sync?.state !== 'following') return 'skipped';
    await syncNow(caller, owner, entry.repository);
    return 'done';
  });
}

/** DELETE …/:batch_id/sync: cuts every following import over; the batch stops following. */
export async function cutOverImportBatch(caller: Caller, batchId: number): Promise<BatchActionResult> {
  const owner = loginOf(caller);
  if (!(await getBatch(owner, batchId))) throw notFound();
  await setBatchFollow(owner, batchId, null);
  return onEach(owner, batchId, async (entry, record, sync) => {
    if (!record || sync?.state !== 'following') return 'skipped';
    await cutOverImport(caller, owner, entry.repository);
    return 'done';
  });
}
