import { pathTo } from '#shared/routes';

/** The repository a progress page belongs to, as the request named it. */
export interface RepoName {
  readonly owner: string;
  readonly repo: string;
}

const at = (handler: string, repo: RepoName, extra: Readonly<Record<string, string | number>> = {}) =>
  pathTo(handler, { owner: repo.owner, repo: repo.repo, ...extra });

/** Addresses of the progress page and its form targets, from the route table. */
export const paths = {
  page: (repo: RepoName) => at('import-page/progress', repo),
  author: (repo: RepoName, authorId: number) => at('import-page/map-author', repo, { author_id: authorId }),
  lfs: (repo: RepoName) => at('import-page/lfs-choice', repo),
  credentials: (repo: RepoName) => at('import-page/credentials', repo),
  project: (repo: RepoName) => at('import-page/project-choice', repo),
  batch: (repo: RepoName) => at('import-page/batch-choice', repo),
  cancel: (repo: RepoName) => at('import-page/cancel', repo),
  restart: (repo: RepoName) => at('import-page/restart', repo),
  follow: (repo: RepoName) => at('import-page/follow', repo),
  syncNow: (repo: RepoName) => at('import-page/sync-now', repo),
  cutOver: (repo: RepoName) => at('import-page/cut-over', repo),
  revisionsCsv: (repo: RepoName, part: number) => `${at('import-page/revisions-csv', repo)}?part=${part}`,
} as const;

/**
 * The dashboard of an import batch (agreed with the dashboard's page: `/imports/batches/{batch_id}`;
 * written out here because that page's route row is its own).
 */
export const batchPagePath = (batchId: number): string => `/imports/batches/${batchId}`;
