import { pageRequest } from '#domain/pagination';
import { type WebReply, type WebRequest, webHandler } from '#http/middleware/web-stack';
import type { Caller } from '#services/authenticate';
import { filteredAuthors } from '#services/authors-file';
import { importSync } from '#services/import-sync';
import { importAuthors, importLargeFiles, importReport, importRevisions } from '#services/imports';
import { HttpError } from '#shared/errors';
import type { NoticeKey } from './notices.ts';
import { paths, type RepoName } from './paths.ts';
import { AUTHORS_SHOWN, type ImportPageData, importPage, noImportPage, type PageProblems } from './views.ts';

/*
 * What the progress page and its form targets share: the signed-in requirement, the caller the
 * import service sees, the page's data, and how a refused change is shown.
 */

/**
 * A page session is a full sign-in (password and, when on, the one-time code): to the import
 * service it is the user with every scope, as with Basic authentication. The service then applies
 * the API's own rule: only the repository's owner sees its import (404 for everyone else).
 */
export const sessionCaller = (request: WebRequest): Caller | undefined =>
  request.user ? { kind: 'user', user: request.user, via: 'password' } : undefined;

const repoOf = (request: WebRequest): RepoName => ({
  owner: request.params.owner ?? '',
  repo: request.params.repo ?? '',
});

/**
 * A progress page route. Signed-out visitors sign in and come back to the page; a 404 from the
 * service (not the owner, no such repository, no import) is one page that says the same for all.
 */
export function importPageHandler(
  run: (request: WebRequest, caller: Caller, repo: RepoName) => Promise<WebReply>,
) {
  return webHandler(async (request) => {
    const repo = repoOf(request);
    const caller = sessionCaller(request);
    if (!caller) {
      const get = request.method === 'GET';
      return {
        location: `/login?return_to=${encodeURIComponent(get ? request.event.path : paths.page(repo))}`,
        status: get ? 302 : 303,
      };
    }
    try {
      return await run(request, caller, repo);
    } catch (error) {
      if (error instanceof HttpError && error.status === 404) return noImportPage(repo);
      throw error;
    }
  });
}

/**
 * The import, one page of its authors (`?page=`, those matching `filter` when given), its large
 * files and its report, read for the page.
 */
export async function pageData(
  caller: Caller,
  repo: RepoName,
  page?: string,
  filter = '',
): Promise<ImportPageData> {
  const authorsPage = { ...pageRequest({ page }), perPage: AUTHORS_SHOWN };
  const [{ record, authors }, files, report, { revisions }, { sync }] = await Promise.all([
    filter === ''
      ? importAuthors(caller, repo.owner, repo.repo, undefined, authorsPage)
      : filteredAuthors(caller, repo.owner, repo.repo, filter, authorsPage),
    importLargeFiles(caller, repo.owner, repo.repo),
    importReport(caller, repo.owner, repo.repo),
    importRevisions(caller, repo.owner, repo.repo, { page: 1, perPage: 0, perPageGiven: true }),
    importSync(caller, repo.owner, repo.repo),
  ]);
  return {
    repo,
    record,
    authors,
    authorsPage,
    authorsFilter: filter,
    largeFiles: files.files,
    report,
    revisionCount: revisions.total,
    sync,
  };
}

/** After a change: back to the page, whose state shows the result, with a fixed notice when asked. */
export const backToPage = (repo: RepoName, notice?: NoticeKey): WebReply => ({
  location: notice ? `${paths.page(repo)}?notice=${notice}` : paths.page(repo),
  status: 303,
});

/** Answers the service gives for a change the page shows in its error box instead of an error page. */
const SHOWN_STATUSES = new Set([409, 422, 503]);

/** Readable messages of a refused change (GitHub's validation errors carry one per field). */
function messagesOf(error: HttpError): string[] {
  const fields = (error.details.errors ?? []).map((field) => field.message ?? `${field.field} is not valid.`);
  return fields.length > 0 ? fields : [error.message];
}

/**
 * Runs a change and redirects back to the page; when the service refuses it (422, a conflict, the
 * workflow unavailable), the page is shown again with the reason and the status of the refusal.
 */
export async function changeThenBack(
  request: WebRequest,
  caller: Caller,
  repo: RepoName,
  change: () => Promise<unknown>,
  {
    typed,
    notice,
    next,
  }: {
    readonly typed?: PageProblems['author'];
    readonly notice?: NoticeKey;
    /** Where to go after the change instead of back to the page. */
    readonly next?: () => string;
  } = {},
): Promise<WebReply> {
  try {
    await change();
    if (next) return { location: next(), status: 303 };
  } catch (error) {
    if (!(error instanceof HttpError && SHOWN_STATUSES.has(error.status))) throw error;
    return importPage(request, await pageData(caller, repo), {
      status: error.status,
      problems: { messages: messagesOf(error), ...(typed ? { author: typed } : {}) },
    });
  }
  return backToPage(repo, notice);
}

/** A refusal found by the page itself, before calling the service (a missing or malformed field). */
export const formRefused = (message: string): HttpError => new HttpError(422, message);
