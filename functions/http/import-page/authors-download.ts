import { AUTHORS_DOWNLOAD_FORMATS, type AuthorsDownloadFormat } from '#domain/authors-file';
import { authorsFileDownload } from '#services/authors-file';
import { importPageHandler } from './import-page.ts';

/**
 * GET /:owner/:repo/import/authors-file?format=: the current mapping of every author as git-svn's
 * `authors.txt` (the default), a CSV or a `.mailmap`, for the owner only.
 */
export const handler = importPageHandler(async (request, caller, repo) => {
  const asked = request.query.format as AuthorsDownloadFormat;
  const format = AUTHORS_DOWNLOAD_FORMATS.includes(asked) ? asked : 'authors_txt';
  return { download: await authorsFileDownload(caller, repo.owner, repo.repo, format) };
});
