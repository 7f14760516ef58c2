import {
  AUTHORS_DOWNLOAD_FORMATS,
  AUTHORS_FILE_FORMATS,
  type AuthorsDownloadFormat,
  type AuthorsFileFormat,
  MAX_AUTHORS_FILE_ENTRIES,
} from '#domain/authors-file';
import type { ImportAuthor } from '#domain/imports';
import type { WebPage, WebRequest } from '#http/middleware/web-stack';
import type { AuthorsFile, AuthorsFileResult } from '#services/authors-file';
import { validationFailed } from '#shared/errors';
import { type Html, html } from '#shared/html';
import { csrfField } from '#shared/page-layout';
import { paths, type RepoName } from './paths.ts';

/*
 * The progress page's tools for many authors (issue 37): a filter (a GET form), the authors file
 * upload (a multipart form: a file input, or the content pasted into a textarea) and the downloads
 * of the current mapping; and the page that answers an upload with what it did.
 */

/** The query parameter of the authors filter. */
export const AUTHORS_FILTER = 'authors';
/** Longest filter kept (longer ones are cut): it is matched as a substring. */
const MAX_FILTER_LENGTH = 255;

export const authorsFilter = (query: Readonly<Record<string, string | undefined>>): string =>
  (query[AUTHORS_FILTER] ?? '').trim().slice(0, MAX_FILTER_LENGTH);

const DOWNLOAD_NAMES: Readonly<Record<AuthorsDownloadFormat, string>> = {
  authors_txt: 'authors.txt (git-svn)',
  csv: 'CSV',
  mailmap: '.mailmap',
};

function filterForm(repo: RepoName, filter: string, matching: number | undefined): Html {
  return html`<form method="get" action="${paths.page(repo)}" role="search" aria-label="Filter authors">
  <label for="authors-filter">Filter authors</label>
  <input type="text" id="authors-filter" name="${AUTHORS_FILTER}" value="${filter}" maxlength="${MAX_FILTER_LENGTH}" autocomplete="off" spellcheck="false">
  <div class="actions"><button type="submit">Filter</button>${
    filter === ''
      ? undefined
      : html` <a href="${paths.page(repo)}#import-authors">Show all authors</a> <span class="muted">${matching ?? 0} matching “${filter}”</span>`
  }</div>
</form>`;
}

/** The links to download an import's current mapping (each as a file). */
export function authorsDownloadLinks(repo: RepoName): Html[] {
  return AUTHORS_DOWNLOAD_FORMATS.map(
    (format) =>
      html`<li><a href="${paths.authorsDownload(repo, format)}" download>${DOWNLOAD_NAMES[format]}</a></li>`,
  );
}

function downloads(repo: RepoName): Html {
  return html`<p class="muted">Download the current mapping:</p><ul id="authors-downloads">${authorsDownloadLinks(repo)}</ul>`;
}

/**
 * Radio buttons, not a select: the live script keeps a region whose inputs differ from their
 * defaults, and a select has no default value to compare with.
 */
const FORMAT_CHOICES: readonly (readonly [string, string])[] = [
  ['', 'Detect from the content'],
  ['authors_txt', 'authors.txt (git-svn)'],
  ['csv', 'CSV'],
];

/** The file input's field name (the pasted content's is `content`, as in the API's body). */
export const AUTHORS_FILE_FIELD = 'file';

const refused = (message: string) =>
  validationFailed([{ resource: 'AuthorsFile', field: 'content', code: 'invalid', message }]);

/**
 * The file a form posted (its content and, when one was chosen, its format): the chosen file's
 * bytes, read as UTF-8, or the pasted content. Both at once, or neither, is refused (422, shown on
 * the page), as is a file that is not UTF-8 (decision 0158).
 */
export function authorsFileOfForm(request: Pick<WebRequest, 'form' | 'files'>): AuthorsFile {
  const { form } = request;
  const asked = form.get('format') as AuthorsFileFormat;
  const format = AUTHORS_FILE_FORMATS.includes(asked) ? asked : undefined;
  const pasted = form.get('content') ?? '';
  const file = request.files.get(AUTHORS_FILE_FIELD);
  if (file && pasted.trim() !== '')
    throw refused(
      'Choose a file or paste its content, not both: nothing was mapped. Clear one and send again.',
    );
  if (!file) {
    if (pasted.trim() === '') throw refused('Choose an authors file, or paste its content.');
    return { format, content: pasted };
  }
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(file.bytes);
  } catch {
    throw refused(
      `The file ${file.filename ? `“${file.filename}” ` : ''}is not UTF-8 text. Save it as UTF-8 (most editors offer it under “Save as”) and choose it again.`,
    );
  }
  return { format, content };
}

/** The format choice and the textarea of an authors file form (ids start with `prefix`). */
export function authorsFileInputs(prefix = 'authors-file'): Html {
  return html`<fieldset><legend>Format</legend><ul class="scopes">
    ${FORMAT_CHOICES.map(
      ([value, text]) =>
        html`<li><label for="${prefix}-format-${value || 'detect'}"><input type="radio" id="${prefix}-format-${value || 'detect'}" name="format" value="${value}"${value === '' ? html` checked` : ''}> <span>${text}</span></label></li>`,
    )}
  </ul></fieldset>
  <label for="${prefix}-file">File</label>
  <input type="file" id="${prefix}-file" name="${AUTHORS_FILE_FIELD}" accept=".txt,.csv,text/plain,text/csv">
  <label for="${prefix}-content">Or paste its content</label>
  <textarea id="${prefix}-content" name="content" rows="8" cols="60" spellcheck="false"></textarea>`;
}

function uploadForm(request: WebRequest, repo: RepoName): Html {
  return html`<form method="post" action="${paths.authorsFile(repo)}" enctype="multipart/form-data" class="panel" aria-labelledby="authors-file-heading">
  <h3 id="authors-file-heading">Map authors from a file</h3>
  ${csrfField(request.csrf)}
  <p class="muted">Choose or paste a git-svn <code>authors.txt</code> (<code>login = Name &lt;email&gt;</code>, one per line) or a CSV (<code>origin,name,email</code>), up to ${MAX_AUTHORS_FILE_ENTRIES.toLocaleString('en-US')} entries. Every author the file names is mapped, and the history is rewritten once.</p>
  ${authorsFileInputs()}
  <div class="actions"><button type="submit" class="primary">Map authors from the file</button></div>
</form>`;
}

/** Above the author table: the filter, the upload and the downloads. */
export function authorsTools(
  request: WebRequest,
  repo: RepoName,
  filter: string,
  matching: number | undefined,
): Html {
  return html`${filterForm(repo, filter, matching)}${uploadForm(request, repo)}${downloads(repo)}`;
}

const who = (author: ImportAuthor) => html`<code>${author.remoteName || author.remoteId}</code>`;

/** The answer to an upload: what was mapped, what the file named that the history lacks, and the rest. */
export function authorsFileAnswer(repo: RepoName, result: AuthorsFileResult): WebPage {
  const mapped = result.mapped.map(
    ({ author, name, email }) => html`<li>${who(author)} → ${name} &lt;${email}&gt;</li>`,
  );
  const missing = result.notInHistory.map(
    (entry) =>
      html`<li>Line ${entry.line}: <code>${entry.origin}</code> → ${entry.name} &lt;${entry.email}&gt;</li>`,
  );
  const unnamed = result.notInFile.map(
    (author) => html`<li>${who(author)} (${author.name} &lt;${author.email}&gt;)</li>`,
  );
  const list = (id: string, title: string, items: readonly Html[], none: string) =>
    html`<section aria-labelledby="${id}-heading"><h2 id="${id}-heading">${title} (${items.length})</h2>${
      items.length === 0 ? html`<p class="muted">${none}</p>` : html`<ul id="${id}">${items}</ul>`
    }</section>`;
  return {
    status: 200,
    title: `Authors file · ${repo.owner}/${repo.repo}`,
    body: html`<h1>Authors file for ${repo.owner}/${repo.repo}</h1>
<div class="notice" role="status"><p>${
      result.changed === 0
        ? 'Nothing changed: every author the file names already had that name and email.'
        : result.rewriting
          ? `${result.changed} ${result.changed === 1 ? 'author was' : 'authors were'} mapped; the history is being rewritten and published again, once for the whole file.`
          : `${result.changed} ${result.changed === 1 ? 'author was' : 'authors were'} mapped; the import uses the mapping when it rewrites the history.`
    }</p></div>
<p><a href="${paths.page(repo)}">Back to the import</a></p>
${list('authors-mapped', 'Mapped', mapped, 'The file names no author of the history.')}
${list('authors-not-in-history', 'In the file, not in the history', missing, 'Every entry names an author of the history.')}
${list('authors-not-in-file', 'In the history, not in the file', unnamed, 'The file names every author of the history.')}`,
  };
}
