import { importUrl } from '#domain/import-json';
import { FINDING_KINDS, type ImportReport } from '#domain/import-report';
import type { Import, ImportAuthor, LargeFile } from '#domain/imports';
import type { RevisionEntry } from '#domain/revision-map';
import type { PublicUrls } from '#shared/urls';

export { importJson, importUrl } from '#domain/import-json';

/** GitHub's commit author of an import (spec §2.6). */
export function importAuthorJson(
  author: ImportAuthor,
  record: Pick<Import, 'ownerLogin' | 'repoName'>,
  urls: PublicUrls,
) {
  const url = importUrl(record, urls);
  return {
    id: author.id,
    remote_id: author.remoteId,
    remote_name: author.remoteName,
    email: author.email,
    name: author.name,
    url: `${url}/authors/${author.id}`,
    import_url: url,
  };
}

/** A large file of an import (spec §2.7). */
export const largeFileJson = (file: LargeFile) => ({
  ref_name: file.refName,
  path: file.path,
  oid: file.oid,
  size: file.size,
});

/**
 * The import report (an extension: GitHub has none), shaped like the rest of the import API: each
 * kind of finding as `<kind>_count` and `<kind>` (its first entries), after the owner's `choices`.
 * Kinds the import did not look for are omitted (docs/importing.md, "The import report").
 */
export function importReportJson(report: ImportReport) {
  const { findings, largeFiles } = report;
  const body: Record<string, unknown> = {
    status: report.status,
    choices: {
      keep_empty_directories: report.choices.keepEmptyDirectories,
      keep_refs_deleted_in_history: report.choices.keepDeletedRefs,
      /** Deprecated name of the field above, kept for existing clients (decision 0150). */
      keep_deleted_refs: report.choices.keepDeletedRefs,
    },
  };
  for (const kind of FINDING_KINDS) {
    const finding = findings[kind];
    if (!finding) continue;
    body[`${kind}_count`] = finding.count;
    body[kind] = finding.listed;
  }
  if (largeFiles) {
    body.large_files_action = largeFiles.action;
    body.large_files_count = largeFiles.count;
    body.large_files_size = largeFiles.size;
    body.large_files = largeFiles.listed.map(largeFileJson);
  }
  return body;
}

/** One entry of the revision map (an extension: GitHub's API has no such resource). */
export const importRevisionJson = (entry: RevisionEntry): Record<string, string> => ({
  origin_revision: entry.originRevision,
  commit: entry.commit,
});
