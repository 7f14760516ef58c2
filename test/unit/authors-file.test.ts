import { describe, expect, it } from 'vitest';
import {
  detectAuthorsFileFormat,
  MAX_AUTHORS_FILE_ENTRIES,
  parseAuthorsFile,
  planAuthorsFile,
  writeAuthorsCsv,
  writeAuthorsTxt,
  writeMailmap,
} from '#domain/authors-file';
import type { ImportAuthor } from '#domain/imports';

/** git-svn's documented authors file (git-svn(1), `--authors-file`), with a comment and blank line. */
const GIT_SVN_SAMPLE = `# authors of the old server
egit = Eric Wong <normalperson@yhbt.net>
jdoe = John Doe <jdoe@example.com>

(no author) = Nobody <nobody@example.com>
`;

/** A sheet saved as CSV by a spreadsheet: BOM, header, quotes around fields with commas and quotes, CRLF. */
const SPREADSHEET_CSV =
  '\uFEFForigin,name,email\r\n' +
  'jdoe,"Doe, John",jdoe@example.com\r\n' +
  'ann,"Ann ""The Ace"" Lee",ann@example.com\r\n' +
  '"multi\r\nline login",Multi Line,multi@example.com\r\n' +
  'bob,Bob Smith,bob@example.com,,\r\n';

const author = (
  id: number,
  remoteName: string,
  remoteId: string,
  name: string,
  email: string,
): ImportAuthor => ({
  id,
  remoteName,
  remoteId,
  name,
  email,
});
const UUID = '0a7c6c1e-1111-2222-3333-444455556666';
const svnAuthor = (id: number, login: string) =>
  author(id, login, `${login} <${login}@${UUID}>`, login, `${login}@${UUID}`);

describe('parseAuthorsFile: git-svn authors.txt', () => {
  it('reads login = Name <email>, skipping comments and blank lines, with each entry’s line', () => {
    const parsed = parseAuthorsFile(GIT_SVN_SAMPLE);
    expect(parsed).toEqual({
      ok: true,
      format: 'authors_txt',
      entries: [
        { line: 2, origin: 'egit', name: 'Eric Wong', email: 'normalperson@yhbt.net' },
        { line: 3, origin: 'jdoe', name: 'John Doe', email: 'jdoe@example.com' },
        { line: 5, origin: '(no author)', name: 'Nobody', email: 'nobody@example.com' },
      ],
    });
  });

  it('reports every bad line with its number and maps nothing', () => {
    const parsed = parseAuthorsFile(
      'a = A <a@example.com>\r\nnot an entry\r\nb = B <no-at>\r\nc = C<D <c@x.org>\r\n',
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map((p) => p.line)).toEqual([2, 3, 4]);
    expect(parsed.problems[1]?.message).toMatch(/email/);
  });

  it('refuses one login mapped two ways, and an empty file', () => {
    const twice = parseAuthorsFile('a = A <a@example.com>\na = B <b@example.com>\n');
    expect(twice.ok === false && twice.problems[0]).toMatchObject({
      line: 2,
      message: expect.stringMatching(/line 1/),
    });
    expect(parseAuthorsFile('# nothing\n\n').ok).toBe(false);
  });

  it('takes 10,000 entries and refuses more than the limit', () => {
    const lines = (n: number) =>
      Array.from({ length: n }, (_, i) => `u${i} = User ${i} <u${i}@example.com>\n`).join('');
    const many = parseAuthorsFile(lines(10_000));
    expect(many.ok && many.entries.length).toBe(10_000);
    expect(parseAuthorsFile(lines(MAX_AUTHORS_FILE_ENTRIES + 1)).ok).toBe(false);
  });
});

describe('parseAuthorsFile: CSV', () => {
  it('reads a spreadsheet’s CSV: BOM, header, quoted commas, quotes and line breaks, CRLF, padded columns', () => {
    const parsed = parseAuthorsFile(SPREADSHEET_CSV);
    expect(parsed).toEqual({
      ok: true,
      format: 'csv',
      entries: [
        { line: 2, origin: 'jdoe', name: 'Doe, John', email: 'jdoe@example.com' },
        { line: 3, origin: 'ann', name: 'Ann "The Ace" Lee', email: 'ann@example.com' },
        { line: 4, origin: 'multi\r\nline login', name: 'Multi Line', email: 'multi@example.com' },
        { line: 6, origin: 'bob', name: 'Bob Smith', email: 'bob@example.com' },
      ],
    });
  });

  it('reads a CSV without header, and names the line of each problem', () => {
    expect(parseAuthorsFile('x,X,x@example.com\n', 'csv')).toMatchObject({
      ok: true,
      entries: [{ line: 1 }],
    });
    const bad = parseAuthorsFile('a,A,a@example.com\nb,B\n"c,C,c@example.com\n', 'csv');
    expect(bad.ok === false && bad.problems.map((p) => p.line)).toEqual([2, 3]);
    const stray = parseAuthorsFile('a,A "x" B,a@example.com\n', 'csv');
    expect(stray.ok === false && stray.problems[0]?.line).toBe(1);
  });

  it('detects the format from the first entry', () => {
    expect(detectAuthorsFileFormat(GIT_SVN_SAMPLE)).toBe('authors_txt');
    expect(detectAuthorsFileFormat(SPREADSHEET_CSV)).toBe('csv');
  });
});

describe('planAuthorsFile', () => {
  const authors = [
    svnAuthor(1, 'jdoe'),
    svnAuthor(2, 'ann'),
    author(3, '(no author)', `(no author) <no-author@${UUID}>`, '(no author)', `no-author@${UUID}`),
    author(4, 'Ada', 'Ada <ada@example.org>', 'Ada King', 'ada@king.example'),
  ];

  it('maps by login, (no author), Git email; lists the rest on both sides; writes only changes', () => {
    const parsed = parseAuthorsFile(
      'jdoe = John Doe <jdoe@example.com>\n(no author) = Nobody <nobody@example.com>\nada@example.org = Ada King <ada@king.example>\nghost = Ghost <g@example.com>\n',
    );
    if (!parsed.ok) throw new Error('unparsed');
    const plan = planAuthorsFile(parsed.entries, authors);
    expect(plan.mapped.map((m) => [m.author.id, m.name])).toEqual([
      [1, 'John Doe'],
      [3, 'Nobody'],
      [4, 'Ada King'],
    ]);
    expect(plan.changes.map((m) => m.author.id)).toEqual([1, 3]);
    expect(plan.notInHistory.map((e) => e.origin)).toEqual(['ghost']);
    expect(plan.notInFile.map((a) => a.id)).toEqual([2]);
  });
});

describe('writing the mapping', () => {
  const authors = [
    author(1, 'jdoe', `jdoe <jdoe@${UUID}>`, 'John Doe', 'jdoe@example.com'),
    author(2, 'ann', `ann <ann@${UUID}>`, 'ann', `ann@${UUID}`),
    author(3, 'Sam', 'Sam <shared@example.org>', 'Sam Smith', 'sam@example.com'),
    author(4, 'Samantha', 'Samantha <shared@example.org>', 'Samantha', 'shared@example.org'),
    author(5, 'O, "Q"', 'O, "Q" <o@example.org>', 'O, "Q"', 'o@example.org'),
  ];

  it('writes authors.txt and CSV that read back to the same mapping', () => {
    for (const [text, format] of [
      [writeAuthorsTxt(authors), 'authors_txt'],
      [writeAuthorsCsv(authors), 'csv'],
    ] as const) {
      const parsed = parseAuthorsFile(text, format);
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
      const plan = planAuthorsFile(parsed.entries, authors);
      expect(plan.notInFile).toEqual([]);
      expect(plan.changes).toEqual([]);
    }
    expect(writeAuthorsTxt(authors)).toContain('jdoe = John Doe <jdoe@example.com>\n');
    expect(writeAuthorsCsv(authors)).toContain('\r\n"O, ""Q""","O, ""Q""",o@example.org\r\n');
  });

  it('writes a .mailmap of the changed identities, with the commit name where an email is shared', () => {
    expect(writeMailmap(authors)).toBe(
      `John Doe <jdoe@example.com> <jdoe@${UUID}>\nSam Smith <sam@example.com> Sam <shared@example.org>\n`,
    );
  });
});
