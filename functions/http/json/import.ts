import { FINDING_KINDS, type ImportReport } from '#domain/import-report';
import {
  type Import,
  type ImportAuthor,
  type LargeFile,
  type ProjectChoice,
  showsPushProgress,
  showsRawProgress,
  statusText,
} from '#domain/imports';
import type { RevisionEntry } from '#domain/revision-map';
import type { PublicUrls } from '#shared/urls';

/** The import's API address, `{base_url}/repos/{owner}/{repo}/import` (also its `Location`). */
export const importUrl = (record: Pick<Import, 'ownerLogin' | 'repoName'>, urls: PublicUrls): string =>
  `${urls.api}/repos/${record.ownerLogin}/${record.repoName}/import`;

const choiceJson = (choice: ProjectChoice) => ({
  vcs: choice.vcs,
  ...(choice.tfvcProject === undefined ? {} : { tfvc_project: choice.tfvcProject }),
  human_name: choice.humanName,
});

/**
 * GitHub's Import JSON (github-behaviour §5.3), in its field order; fields that do not apply are
 * omitted. Progress is sent both as `import_percent` (what GitHub's servers sent) and `percent`
 * (what its docs showed), with `commit_count`, null until known, while the raw step or a later
 * running step is under way; `push_percent` while pushing; `failed_step` and `error_message` on
 * error; `project_choices` when detection found several. Credentials, task tokens and execution
 * ARNs are never shown.
 */
export function importJson(record: Import, urls: PublicUrls) {
  const url = importUrl(record, urls);
  const raw = showsRawProgress(record.status);
  return {
    vcs: record.vcs,
    use_lfs: record.useLfs,
    vcs_url: record.vcsUrl,
    ...(record.tfvcProject === undefined ? {} : { tfvc_project: record.tfvcProject }),
    status: record.status,
    status_text: statusText(record.status),
    ...(record.status === 'error'
      ? { failed_step: record.failedStep ?? null, error_message: record.errorMessage ?? null }
      : {}),
    ...(raw
      ? { import_percent: record.percent, percent: record.percent, commit_count: record.commitCount }
      : {}),
    ...(showsPushProgress(record.status) ? { push_percent: record.pushPercent } : {}),
    has_large_files: record.hasLargeFiles,
    large_files_size: record.largeFilesSize,
    large_files_count: record.largeFilesCount,
    authors_count: record.authorsCount,
    ...(record.status === 'detection_found_multiple'
      ? { project_choices: (record.projectChoices ?? []).map(choiceJson) }
      : {}),
    url,
    html_url: `${urls.import}/${record.ownerLogin}/${record.repoName}/import`,
    authors_url: `${url}/authors`,
    repository_url: `${urls.api}/repos/${record.ownerLogin}/${record.repoName}`,
  };
}

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
 * Kinds the import did not look for are omitted (README, "The import report").
 */
export function importReportJson(report: ImportReport) {
  const { findings, largeFiles } = report;
  const body: Record<string, unknown> = {
    status: report.status,
    choices: {
      keep_empty_directories: report.choices.keepEmptyDirectories,
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
