/**
 * Authors files (issue 37, item 4): git-svn's `authors.txt` and a CSV of `origin,name,email`,
 * parsed into entries with their line numbers, matched against an import's authors, and written
 * back out (with git's `.mailmap`) from the current mapping. Pure: no I/O.
 */
import { type ImportAuthor, isAuthorEmail, isAuthorName, splitGitRemoteId } from './imports.ts';

export type AuthorsFileFormat = 'authors_txt' | 'csv';
export type AuthorsDownloadFormat = AuthorsFileFormat | 'mailmap';

export const AUTHORS_FILE_FORMATS: readonly AuthorsFileFormat[] = ['authors_txt', 'csv'];
export const AUTHORS_DOWNLOAD_FORMATS: readonly AuthorsDownloadFormat[] = ['authors_txt', 'csv', 'mailmap'];

/**
 * Largest file (UTF-8 bytes): the API's request body limit (`MAX_REQUEST_BODY_BYTES`, which fits
 * Lambda's 6 MB invocation payload escaped 6 to 1), so the file is never what refuses a request
 * the gateway took. 10,000 entries of git-svn's usual length (`jdoe = Jane Doe <jane@example.com>`,
 * about 40 bytes) take some 400 KB.
 */
export const MAX_AUTHORS_FILE_BYTES = 1_000_000;
/** Most entries in one file: twice the 10,000 a large Subversion server has. */
export const MAX_AUTHORS_FILE_ENTRIES = 20_000;
/** Most per-line problems reported in one answer (the rest are counted in the last message). */
export const MAX_REPORTED_PROBLEMS = 100;

/** git-svn's name for the author of a revision without `svn:author` (every adapter uses it). */
export const NO_AUTHOR = '(no author)';

export interface AuthorsFileEntry {
  /** 1-based line of the file the entry starts on. */
  readonly line: number;
  /** The author as the origin names them: a Subversion login, a Git `Name <email>` or email. */
  readonly origin: string;
  readonly name: string;
  readonly email: string;
}

export interface AuthorsFileProblem {
  readonly line: number;
  readonly message: string;
}

export type ParsedAuthorsFile =
  | { readonly ok: true; readonly format: AuthorsFileFormat; readonly entries: readonly AuthorsFileEntry[] }
  | {
      readonly ok: false;
      readonly format: AuthorsFileFormat;
      readonly problems: readonly AuthorsFileProblem[];
    };

/** git-svn's own pattern (`load_authors`): `login = Name <email>`, the login up to the first `=`. */
const AUTHORS_TXT_LINE = /^\s*(.+?)\s*=\s*(.+?)\s*<(.*)>\s*$/;

const withoutBom = (content: string): string => (content.startsWith('\uFEFF') ? content.slice(1) : content);
const isSkipped = (line: string): boolean => line.trim() === '' || line.trimStart().startsWith('#');

/**
 * The format of a file sent without one: `authors_txt` when its first line that is not blank or a
 * comment reads `login = Name <email>`, CSV otherwise.
 */
export function detectAuthorsFileFormat(content: string): AuthorsFileFormat {
  const first = withoutBom(content)
    .split(/\r?\n/)
    .find((line) => !isSkipped(line));
  return first !== undefined && AUTHORS_TXT_LINE.test(first) ? 'authors_txt' : 'csv';
}

interface RawEntry {
  readonly line: number;
  readonly fields: readonly string[];
}

function authorsTxtEntries(content: string, problems: AuthorsFileProblem[]): AuthorsFileEntry[] {
  const entries: AuthorsFileEntry[] = [];
  content.split('\n').forEach((raw, index) => {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (isSkipped(text)) return;
    const match = AUTHORS_TXT_LINE.exec(text);
    if (!match) {
      problems.push({ line: index + 1, message: 'expected `login = Name <email>`' });
      return;
    }
    entries.push({
      line: index + 1,
      origin: match[1] ?? '',
      name: match[2] ?? '',
      email: (match[3] ?? '').trim(),
    });
  });
  return entries;
}

/**
 * RFC 4180 records: fields split by `,`, a field in double quotes may hold commas, line breaks and
 * `""` for one quote; records end with CRLF or LF. Each record keeps the line it starts on.
 */
function csvRecords(content: string, problems: AuthorsFileProblem[]): RawEntry[] {
  const records: RawEntry[] = [];
  let line = 1;
  let i = 0;
  while (i < content.length) {
    const start = line;
    const fields: string[] = [];
    let field = '';
    let broken = false;
    for (;;) {
      if (content[i] === '"') {
        i++;
        let closed = false;
        while (i < content.length) {
          const char = content[i] as string;
          if (char === '"' && content[i + 1] === '"') {
            field += '"';
            i += 2;
          } else if (char === '"') {
            i++;
            closed = true;
            break;
          } else {
            if (char === '\n') line++;
            field += char;
            i++;
          }
        }
        if (!closed) {
          problems.push({ line: start, message: 'a quoted field is not closed' });
          return records;
        }
        const next = content[i];
        if (
          next !== undefined &&
          next !== ',' &&
          next !== '\n' &&
          !(next === '\r' && content[i + 1] === '\n')
        ) {
          broken = true;
        }
      } else {
        while (i < content.length && content[i] !== ',' && content[i] !== '\n') {
          if (content[i] === '"') broken = true;
          field += content[i];
          i++;
        }
        if (field.endsWith('\r') && content[i] !== ',') field = field.slice(0, -1);
      }
      if (broken) {
        problems.push({
          line: start,
          message: 'a quote inside a field that is not quoted, or text after a closing quote',
        });
        while (i < content.length && content[i] !== '\n') i++;
        break;
      }
      fields.push(field);
      field = '';
      if (content[i] === ',') {
        i++;
        continue;
      }
      if (content[i] === '\r') i++;
      break;
    }
    if (content[i] === '\n') {
      i++;
      line++;
    }
    if (!broken) records.push({ line: start, fields });
  }
  return records;
}

const HEADER = ['origin', 'name', 'email'];
const isHeader = (fields: readonly string[]): boolean =>
  HEADER.every((name, index) => (fields[index] ?? '').trim().toLowerCase() === name);

function csvEntries(content: string, problems: AuthorsFileProblem[]): AuthorsFileEntry[] {
  const entries: AuthorsFileEntry[] = [];
  csvRecords(content, problems).forEach((record, index) => {
    const fields = record.fields;
    if (fields.every((field) => field.trim() === '')) return;
    if (index === 0 && isHeader(fields)) return;
    // Spreadsheets pad rows with empty columns: only the first three may hold anything.
    if (fields.length < 3 || fields.slice(3).some((field) => field.trim() !== '')) {
      problems.push({
        line: record.line,
        message: `expected 3 fields (origin,name,email), found ${fields.length}`,
      });
      return;
    }
    const [origin, name, email] = fields.map((field) => field.trim());
    entries.push({ line: record.line, origin: origin ?? '', name: name ?? '', email: email ?? '' });
  });
  return entries;
}

function entryProblems(entries: readonly AuthorsFileEntry[], problems: AuthorsFileProblem[]): void {
  const first = new Map<string, AuthorsFileEntry>();
  for (const entry of entries) {
    if (entry.origin === '') problems.push({ line: entry.line, message: 'the origin author is empty' });
    if (!isAuthorName(entry.name))
      problems.push({
        line: entry.line,
        message: 'the name must be one non-blank line without < or > (at most 255 characters)',
      });
    if (!isAuthorEmail(entry.email))
      problems.push({
        line: entry.line,
        message: 'the email must look like name@host (at most 255 characters)',
      });
    const before = first.get(entry.origin);
    if (before && (before.name !== entry.name || before.email !== entry.email))
      problems.push({
        line: entry.line,
        message: `${entry.origin} is mapped differently on line ${before.line}`,
      });
    if (!before) first.set(entry.origin, entry);
  }
}

/**
 * Parses a whole file (`format` detected when not given). Every problem is found, with its line,
 * before anything is used: a file with one bad line maps nothing.
 */
export function parseAuthorsFile(content: string, format?: AuthorsFileFormat): ParsedAuthorsFile {
  const text = withoutBom(content);
  const chosen = format ?? detectAuthorsFileFormat(text);
  const problems: AuthorsFileProblem[] = [];
  if (Buffer.byteLength(text, 'utf8') > MAX_AUTHORS_FILE_BYTES)
    return {
      ok: false,
      format: chosen,
      problems: [
        { line: 0, message: `the file is over ${MAX_AUTHORS_FILE_BYTES.toLocaleString('en-US')} bytes` },
      ],
    };
  const entries = chosen === 'csv' ? csvEntries(text, problems) : authorsTxtEntries(text, problems);
  if (entries.length > MAX_AUTHORS_FILE_ENTRIES)
    problems.push({
      line: entries[MAX_AUTHORS_FILE_ENTRIES]?.line ?? 0,
      message: `the file has ${entries.length} entries; at most ${MAX_AUTHORS_FILE_ENTRIES.toLocaleString('en-US')} are accepted`,
    });
  entryProblems(entries, problems);
  if (problems.length > 0) {
    problems.sort((a, b) => a.line - b.line);
    return { ok: false, format: chosen, problems };
  }
  if (entries.length === 0)
    return { ok: false, format: chosen, problems: [{ line: 0, message: 'the file has no entries' }] };
  return { ok: true, format: chosen, entries };
}

// ---- Matching ------------------------------------------------------------------------------

export interface AuthorChange {
  readonly author: ImportAuthor;
  readonly name: string;
  readonly email: string;
}

export interface AuthorsFilePlan {
  /** Every author of the history the file names, with the identity the file gives them. */
  readonly mapped: readonly AuthorChange[];
  /** The subset of `mapped` whose stored identity differs: what has to be written. */
  readonly changes: readonly AuthorChange[];
  /** Entries that name no author of the history. */
  readonly notInHistory: readonly AuthorsFileEntry[];
  /** Authors of the history the file does not name. */
  readonly notInFile: readonly ImportAuthor[];
}

/** The identity an author had in the origin's history (before any mapping). */
export function originalIdentity(author: ImportAuthor): { name: string; email: string } {
  return splitGitRemoteId(author.remoteId) ?? { name: author.remoteName, email: author.email };
}

/**
 * Which authors each entry maps. An entry names an author by its remote id (`Name <email>` for
 * Git, `login <login@uuid>` for Subversion), its original email, or its remote name (the
 * Subversion login, the Git author name); for each author the most precise of these wins.
 */
export function planAuthorsFile(
  entries: readonly AuthorsFileEntry[],
  authors: readonly ImportAuthor[],
): AuthorsFilePlan {
  const byOrigin = new Map<string, AuthorsFileEntry>();
  for (const entry of entries) if (!byOrigin.has(entry.origin)) byOrigin.set(entry.origin, entry);
  const used = new Set<AuthorsFileEntry>();
  const mapped: AuthorChange[] = [];
  const notInFile: ImportAuthor[] = [];
  for (const author of authors) {
    const entry =
      byOrigin.get(author.remoteId) ??
      byOrigin.get(originalIdentity(author).email) ??
      byOrigin.get(author.remoteName);
    if (!entry) {
      notInFile.push(author);
      continue;
    }
    used.add(entry);
    mapped.push({ author, name: entry.name, email: entry.email });
  }
  return {
    mapped,
    changes: mapped.filter(
      (change) => change.author.name !== change.name || change.author.email !== change.email,
    ),
    notInHistory: [...byOrigin.values()].filter((entry) => !used.has(entry)),
    notInFile,
  };
}

// ---- Writing --------------------------------------------------------------------------------

/**
 * The name a downloaded file gives an author: the remote name (what git-svn's files use) when it
 * names only this author and fits on a line, its remote id otherwise.
 */
function originKeys(authors: readonly ImportAuthor[], fits: (key: string) => boolean): string[] {
  const count = new Map<string, number>();
  for (const author of authors) count.set(author.remoteName, (count.get(author.remoteName) ?? 0) + 1);
  return authors.map((author) =>
    author.remoteName !== '' && count.get(author.remoteName) === 1 && fits(author.remoteName)
      ? author.remoteName
      : author.remoteId,
  );
}

const oneLine = (text: string): boolean => !/[\r\n]/.test(text);

/** git-svn's `authors.txt`: `login = Name <email>` for every author, in id order. */
export function writeAuthorsTxt(authors: readonly ImportAuthor[]): string {
  const fits = (key: string) => oneLine(key) && !key.includes('=') && key.trim() === key;
  const keys = originKeys(authors, fits);
  return authors
    .map((author, index) => {
      const key = keys[index] ?? author.remoteId;
      return fits(key)
        ? `${key} = ${author.name} <${author.email}>\n`
        : `# not expressible in this format (use the CSV): ${JSON.stringify(author.remoteId)}\n`;
    })
    .join('');
}

const csvField = (value: string): string =>
  /[",\r\n]/.test(value) || value.trim() !== value ? `"${value.replace(/"/g, '""')}"` : value;

/** A CSV (RFC 4180, CRLF) with the header `origin,name,email`. */
export function writeAuthorsCsv(authors: readonly ImportAuthor[]): string {
  const keys = originKeys(authors, () => true);
  const rows = authors.map((author, index) =>
    [keys[index] ?? author.remoteId, author.name, author.email].map(csvField).join(','),
  );
  return ['origin,name,email', ...rows].map((row) => `${row}\r\n`).join('');
}

/**
 * git's `.mailmap` (gitmailmap(5)) from the origin's identities to the mapped ones, for the authors
 * whose identity changed: `Proper Name <proper@email> <commit@email>`, with the commit name too
 * (`… Commit Name <commit@email>`) when several origin identities share the email (git compares
 * emails without case).
 */
export function writeMailmap(authors: readonly ImportAuthor[]): string {
  const originals = authors.map(originalIdentity);
  const perEmail = new Map<string, number>();
  for (const { email } of originals)
    perEmail.set(email.toLowerCase(), (perEmail.get(email.toLowerCase()) ?? 0) + 1);
  const lines: string[] = [];
  authors.forEach((author, index) => {
    const original = originals[index];
    if (!original || (original.name === author.name && original.email === author.email)) return;
    const commitName = (perEmail.get(original.email.toLowerCase()) ?? 0) > 1 ? `${original.name} ` : '';
    lines.push(`${author.name} <${author.email}> ${commitName}<${original.email}>\n`);
  });
  return lines.join('');
}

export function writeAuthorsFile(format: AuthorsDownloadFormat, authors: readonly ImportAuthor[]): string {
  if (format === 'csv') return writeAuthorsCsv(authors);
  if (format === 'mailmap') return writeMailmap(authors);
  return writeAuthorsTxt(authors);
}

/** Media type and file name of each download. */
export const AUTHORS_DOWNLOADS: Readonly<
  Record<AuthorsDownloadFormat, { readonly contentType: string; readonly filename: (repo: string) => string }>
> = {
  authors_txt: { contentType: 'text/plain; charset=utf-8', filename: (repo) => `${repo}-authors.txt` },
  csv: { contentType: 'text/csv; charset=utf-8', filename: (repo) => `${repo}-authors.csv` },
  mailmap: { contentType: 'text/plain; charset=utf-8', filename: () => '.mailmap' },
};

/**
 * The entries that name no author of any of several histories (a batch's imports): those every
 * import's plan left `notInHistory`. With no history at all, every entry.
 */
export function notInAnyHistory(
  entries: readonly AuthorsFileEntry[],
  notInEach: readonly (readonly AuthorsFileEntry[])[],
): AuthorsFileEntry[] {
  const unmatched = notInEach.map((list) => new Set(list.map((entry) => entry.line)));
  const seen = new Set<string>();
  return entries.filter((entry) => {
    if (seen.has(entry.origin)) return false;
    seen.add(entry.origin);
    return unmatched.every((lines) => lines.has(entry.line));
  });
}
