import type { ImportBatch } from '#domain/import-batches';
import { importUrl } from '#domain/import-json';
import type { BatchAuthorsResult } from '#services/import-batch-authors';
import type { BatchActionResult, BatchEntryView, BatchView } from '#services/import-batches';
import type { PublicUrls } from '#shared/urls';

/** The dashboard page of a batch (`/imports/batches/{batch_id}`, under the import pages' host). */
export const batchPageUrl = (batch: Pick<ImportBatch, 'id'>, urls: Pick<PublicUrls, 'import'>): string =>
  `${urls.import}/imports/batches/${batch.id}`;

export const batchUrl = (batch: Pick<ImportBatch, 'id'>, urls: Pick<PublicUrls, 'api'>): string =>
  `${urls.api}/user/import-batches/${batch.id}`;

/**
 * A batch without its entries (the list): counts by queue state. `running` is the slots held: the
 * imports of the batch a worker runs now.
 */
export function importBatchSummaryJson(batch: ImportBatch, urls: PublicUrls) {
  const { options } = batch;
  return {
    id: batch.id,
    url: batchUrl(batch, urls),
    html_url: batchPageUrl(batch, urls),
    owner: batch.ownerLogin,
    total: batch.total,
    queued: batch.queued,
    running: batch.running,
    concurrency: options.concurrency,
    from_import: batch.fromImport ?? null,
    has_credentials: batch.hasCredentials,
    use_lfs: options.useLfs,
    keep_empty_directories: options.choices.keepEmptyDirectories,
    keep_refs_deleted_in_history: options.choices.keepDeletedRefs,
    /** The deprecated name of `keep_refs_deleted_in_history` (decision 0150). */
    keep_deleted_refs: options.choices.keepDeletedRefs,
    private: options.private,
    following: options.follow ? { interval_minutes: options.follow.intervalMinutes } : null,
    created_at: batch.createdAt,
    updated_at: batch.updatedAt,
  };
}

/**
 * One entry: where it is in the queue (`state`), and once it has an import, the import's status,
 * percent and following state; `html_url` is its progress page, `import_url` its import resource.
 */
export function batchEntryJson(view: BatchEntryView, owner: string, urls: PublicUrls) {
  const { entry, record, sync } = view;
  const repo = { ownerLogin: owner, repoName: entry.repository };
  return {
    index: entry.index,
    repository: entry.repository,
    full_name: `${owner}/${entry.repository}`,
    vcs: record?.vcs ?? entry.vcs,
    vcs_url: entry.vcsUrl,
    project: entry.project?.humanName ?? entry.tfvcProject ?? null,
    state: entry.state,
    message: entry.message ?? null,
    status: record?.status ?? null,
    percent: record?.percent ?? null,
    error_message: record?.errorMessage ?? null,
    following: sync?.state ?? null,
    interval_minutes: sync?.intervalMinutes ?? null,
    last_synced_at: sync?.lastSyncedAt ?? null,
    html_url: `${urls.import}/${owner}/${entry.repository}/import`,
    import_url: importUrl(repo, urls),
    repository_url: `${urls.api}/repos/${owner}/${entry.repository}`,
  };
}

/** The batch with every entry (its GET, and the answer of its creation). */
export function importBatchJson(view: BatchView, urls: PublicUrls) {
  return {
    ...importBatchSummaryJson(view.batch, urls),
    imports: view.entries.map((entry) => batchEntryJson(entry, view.batch.ownerLogin, urls)),
  };
}

/** The answer of an action on all: the batch after it, and what it did to each entry. */
export function batchActionJson(result: BatchActionResult, urls: PublicUrls) {
  return {
    ...importBatchJson(result.view, urls),
    outcomes: result.outcomes.map((outcome) => ({
      index: outcome.index,
      repository: outcome.repository,
      outcome: outcome.outcome,
      ...(outcome.status === undefined ? {} : { status: outcome.status }),
      ...(outcome.message === undefined ? {} : { message: outcome.message }),
    })),
  };
}

/**
 * The answer of a batch's authors file: the batch after it, the entries that name no author of any
 * import it was applied to, and per entry what the file did. An applied entry gives counts and the
 * remote names of the authors the file leaves unnamed (not the single import's full lists: 200
 * imports of 1,000 authors each would not fit an answer); its `authors_url` lists them all.
 */
export function batchAuthorsJson(result: BatchAuthorsResult, urls: PublicUrls) {
  const owner = result.view.batch.ownerLogin;
  return {
    ...importBatchJson(result.view, urls),
    format: result.format,
    not_in_any_history: result.notInAnyHistory.map(({ line, origin, name, email }) => ({
      line,
      origin,
      name,
      email,
    })),
    outcomes: result.outcomes.map((one) => {
      const base = { index: one.index, repository: one.repository, outcome: one.outcome };
      if (one.outcome === 'skipped')
        return { ...base, reason: one.reason, ...(one.status === undefined ? {} : { status: one.status }) };
      const { result: applied } = one;
      const url = importUrl({ ownerLogin: owner, repoName: one.repository }, urls);
      return {
        ...base,
        status: applied.record.status,
        rewriting: applied.rewriting,
        mapped: applied.mapped.length,
        changed: applied.changed,
        not_in_history: applied.notInHistory.length,
        not_in_file: applied.notInFile.map((author) => author.remoteName),
        import_url: url,
        authors_url: `${url}/authors`,
      };
    }),
  };
}
