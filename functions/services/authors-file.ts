/**
 * Authors files for one import (issue 37, item 4): a whole git-svn `authors.txt` or CSV mapped in
 * one go, and the current mapping downloaded as either, or as a `.mailmap`. A batch's "file for all
 * imports" (`import-batch-authors.ts`) parses once with `parsedAuthorsFile` and applies the entries to
 * each import with `applyParsedAuthorsFile`.
 */
import { mapAuthors } from '#data/imports/author-mappings';
import { getImport, listAuthors } from '#data/imports/items';
import {
  AUTHORS_DOWNLOADS,
  type AuthorChange,
  type AuthorsDownloadFormat,
  type AuthorsFileEntry,
  type AuthorsFileFormat,
  MAX_REPORTED_PROBLEMS,
  parseAuthorsFile,
  planAuthorsFile,
  writeAuthorsFile,
} from '#domain/authors-file';
import { acceptsHistoryChanges, type Import, type ImportAuthor } from '#domain/imports';
import { type Page, type PageRequest, pageStart } from '#domain/pagination';
import { type FieldError, validationFailed } from '#shared/errors';
import type { Caller } from './authenticate.ts';
import { statusChanged } from './import-events.ts';
import { recordAuthorsFileApplied } from './import-security-events.ts';
import { invalid, ownedImport, republish, withFreshImport } from './imports.ts';

export interface AuthorsFile {
  /** Detected from the content when absent. */
  readonly format?: AuthorsFileFormat | undefined;
  readonly content: string;
}

export interface AuthorsFileResult {
  /** The import after the file (in `mapping` when its history is being rewritten). */
  readonly record: Import;
  readonly format: AuthorsFileFormat;
  /** The authors the file names, with the identity it gave them. */
  readonly mapped: readonly AuthorChange[];
  /** How many of them changed (0 when the same file is sent again). */
  readonly changed: number;
  readonly notInHistory: readonly AuthorsFileEntry[];
  readonly notInFile: readonly ImportAuthor[];
  /** Whether the history is rewritten and pushed again for it (once for the whole file). */
  readonly rewriting: boolean;
}

/** A per-line problem in GitHub's error format, with the line beside the message. */
interface LineError extends FieldError {
  readonly line: number;
}

function refuseFile(problems: readonly { line: number; message: string }[]): never {
  const shown = problems.slice(0, MAX_REPORTED_PROBLEMS);
  const errors: LineError[] = shown.map((problem) => ({
    resource: 'AuthorsFile',
    field: 'content',
    code: 'invalid',
    line: problem.line,
    message: problem.line > 0 ? `Line ${problem.line}: ${problem.message}` : `The file: ${problem.message}`,
  }));
  const more = problems.length - shown.length;
  throw validationFailed(
    more > 0
      ? [
          ...errors,
          { resource: 'AuthorsFile', field: 'content', code: 'custom', message: `and ${more} more problems` },
        ]
      : errors,
  );
}

/** A file that parsed: its format and entries (a bad file never gets this far). */
export interface ParsedAuthorsFile {
  readonly format: AuthorsFileFormat;
  readonly entries: readonly AuthorsFileEntry[];
}

/**
 * The file's entries, or 422 with one error per bad line (GitHub's error format). The only place a
 * file is parsed and checked: one import's PUT and a whole batch's both start here.
 */
export function parsedAuthorsFile(file: AuthorsFile): ParsedAuthorsFile {
  const parsed = parseAuthorsFile(file.content, file.format);
  if (!parsed.ok) refuseFile(parsed.problems);
  return { format: parsed.format, entries: parsed.entries };
}

/**
 * PUT …/import/authors: maps every author of the history the file names, until the owner pushes
 * commits of their own (422 after). A file with any bad line maps nothing (422, one error per
 * line). Only authors whose identity changes are written; on a complete import they and the
 * import's next attempt are written under the attempt read, and the history is rewritten and
 * pushed once for the whole file. The same file sent again changes nothing and rewrites nothing.
 */
export async function applyAuthorsFile(
  caller: Caller,
  owner: string,
  repo: string,
  file: AuthorsFile,
): Promise<AuthorsFileResult> {
  const parsed = parsedAuthorsFile(file);
  return applyParsedAuthorsFile(await ownedImport(caller, owner, repo), parsed);
}

/**
 * A parsed file applied to one import the caller owns (`first`, as read): the rules of the PUT
 * above (422 once the owner pushed; only changes written; one rewrite when complete), retried on a
 * concurrent change of the import.
 */
export async function applyParsedAuthorsFile(
  first: Import,
  parsed: ParsedAuthorsFile,
): Promise<AuthorsFileResult> {
  const { ownerLogin, repoName } = first;
  // A refused chunk may have written some authors already: the retry's plan no longer sees them
  // as changes, but the rewrite they need is still owed.
  let maybeWritten = false;
  const done = await withFreshImport(ownerLogin, repoName, first, async (record) => {
    if (!acceptsHistoryChanges(record))
      throw invalid(
        'status',
        'The repository has commits of its own since the import: authors can no longer be mapped',
      );
    const plan = planAuthorsFile(parsed.entries, await listAuthors(ownerLogin, repoName, record.importId));
    const rewriting = record.status === 'complete' && (plan.changes.length > 0 || maybeWritten);
    const outcome = await mapAuthors(
      ownerLogin,
      repoName,
      record,
      plan.changes.map(({ author, name, email }) => ({ authorId: author.id, name, email })),
      rewriting,
    );
    if (outcome !== 'ok') {
      maybeWritten ||= plan.changes.length > 0;
      return undefined;
    }
    if (rewriting) {
      await statusChanged(ownerLogin, repoName, record.status);
      await republish(record);
    }
    return { record, plan, rewriting };
  });
  const { plan } = done;
  // A file sent again changes nothing the second time: only a file that changed authors is an event.
  if (plan.changes.length > 0) await recordAuthorsFileApplied(done.record, plan.changes.length);
  return {
    record: (await getImport(ownerLogin, repoName)) ?? done.record,
    format: parsed.format,
    mapped: plan.mapped,
    changed: plan.changes.length,
    notInHistory: plan.notInHistory,
    notInFile: plan.notInFile,
    rewriting: done.rewriting,
  };
}

export interface AuthorsDownload {
  readonly contentType: string;
  readonly filename: string;
  readonly body: string;
}

/** GET …/import/authors?format=: the current mapping of every author, as a file. */
export async function authorsFileDownload(
  caller: Caller,
  owner: string,
  repo: string,
  format: AuthorsDownloadFormat,
): Promise<AuthorsDownload> {
  const record = await ownedImport(caller, owner, repo);
  const authors = await listAuthors(record.ownerLogin, record.repoName, record.importId);
  const { contentType, filename } = AUTHORS_DOWNLOADS[format];
  return { contentType, filename: filename(record.repoName), body: writeAuthorsFile(format, authors) };
}

/** Whether an author's origin or mapped identity contains `filter` (without case). */
const matches = (author: ImportAuthor, filter: string): boolean =>
  [author.remoteName, author.remoteId, author.name, author.email].some((text) =>
    text.toLowerCase().includes(filter),
  );

/**
 * One page of the authors whose origin or mapped identity contains `filter` (the progress page's
 * filter box), and how many match. Reads every author of the import (one paged Query) and filters
 * them here: DynamoDB has no substring index, and 10,000 authors are some 2 MB to read.
 */
export async function filteredAuthors(
  caller: Caller,
  owner: string,
  repo: string,
  filter: string,
  page: PageRequest,
): Promise<{ record: Import; authors: Page<ImportAuthor> }> {
  const record = await ownedImport(caller, owner, repo);
  const wanted = filter.toLowerCase();
  const all = (await listAuthors(record.ownerLogin, record.repoName, record.importId)).filter((author) =>
    matches(author, wanted),
  );
  const start = pageStart(page);
  return { record, authors: { items: all.slice(start, start + page.perPage), total: all.length } };
}
