/**
 * GitHub's Import JSON, as the API shows it: pure, so that the API's answers and the import events
 * (`services/import-events.ts`) render one shape. Only the two public addresses it names are needed.
 */
import {
  type Import,
  type ProjectChoice,
  showsPushProgress,
  showsRawProgress,
  statusText,
} from './imports.ts';

/** The public addresses an import names: `{base_url}` and the web host of its progress page. */
export interface ImportUrls {
  readonly api: string;
  readonly import: string;
}

/** The import's API address, `{base_url}/repos/{owner}/{repo}/import` (also its `Location`). */
export const importUrl = (record: Pick<Import, 'ownerLogin' | 'repoName'>, urls: ImportUrls): string =>
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
export function importJson(record: Import, urls: ImportUrls) {
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
