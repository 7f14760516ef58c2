import { describe, expect, it } from 'vitest';
import { FINDING_KINDS, type FindingEntry, findingOf, type ImportReport } from '#domain/import-report';
import { DEFAULT_IMPORT_CHOICES } from '#domain/imports';
import { reportRegion } from '#http/import-page/report-view';
import { entryLabel, FINDING_WORDS, largeFilesSentence } from '#http/import-page/report-words';

/*
 * The import report in plain words (the progress page's report region): one sentence per kind of
 * finding with its count and first names, the large files' fate, and the owner's choices.
 */

const HOSTILE = '<img src=x onerror=alert(1)>';
const text = (report: ImportReport): string =>
  reportRegion(report)
    .toString()
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ');

const report = (changes: Partial<ImportReport> = {}): ImportReport => ({
  status: 'complete',
  choices: DEFAULT_IMPORT_CHOICES,
  findings: {},
  ...changes,
});

describe('the import report in plain words', () => {
  it('has a sentence for every kind of finding, singular and plural, naming no kind by its key', () => {
    for (const kind of FINDING_KINDS) {
      const words = FINDING_WORDS[kind];
      const one = words.sentence(1, DEFAULT_IMPORT_CHOICES);
      const many = words.sentence(3, DEFAULT_IMPORT_CHOICES);
      expect(one).toMatch(/^1 \S.* was /);
      expect(many).toMatch(/^3 \S.* were /);
      expect(many).not.toContain(kind);
    }
  });

  it('says one sentence per kind found, with its count and first names, and "and N more" past five', () => {
    const directories = ['a/', 'b/c/', 'd/', 'e/', 'f/', 'g/', 'h/'].map((path) => ({ path }));
    const html = text(
      report({
        findings: {
          empty_directories: findingOf(directories),
          renamed_refs: findingOf([
            {
              kind: 'branch',
              origin_name: 'a/?',
              ref: 'refs/heads/branches/a-_-b3c5f964',
              reason: 'invalid',
            },
          ]),
          svn_externals: findingOf([], 0),
        },
      }),
    );
    expect(html).toContain(
      '1 branch, bookmark or tag was renamed (Git refuses their names, or they clash with another ref): a/? → branches/a-_-b3c5f964.',
    );
    expect(html).toContain(
      '7 empty directories were not kept (Git stores no empty directories): a/, b/c/, d/, e/, f/, and 2 more.',
    );
    // A kind looked for and not found says nothing; the order is the API's.
    expect(html).not.toContain('svn:externals definition');
    expect(html.indexOf('renamed')).toBeLessThan(html.indexOf('empty directories'));
  });

  it('words the kinds an owner can choose by the choice taken', () => {
    const findings = {
      empty_directories: findingOf([{ path: 'doc/' }]),
      kept_deleted_refs: findingOf([{ kind: 'branch', origin_name: 'old', ref: 'refs/tags/backups/old@12' }]),
    };
    const defaults = text(report({ findings }));
    expect(defaults).toContain('1 empty directory was not kept');
    expect(defaults).toContain(
      '1 branch or tag deleted in the origin was kept as tags: old → backups/old@12.',
    );
    expect(defaults).toContain('Empty directories are not kept. (keep_empty_directories: false)');
    expect(defaults).toContain(
      'history before the import are kept as tags named backups/&lt;name&gt;@&lt;revision&gt;. (keep_refs_deleted_in_history: true)',
    );
    const other = text(report({ findings, choices: { keepEmptyDirectories: true, keepDeletedRefs: false } }));
    expect(other).toContain('1 empty directory was kept, each with an empty .gitignore file: doc/.');
    expect(other).toContain('deleted in the origin was not kept');
    expect(
      text(
        report({
          findings: {
            kept_deleted_refs: findingOf([
              { kind: 'tag', origin_name: 'v1', revision: 9, kept: false, ref: null },
            ]),
          },
          choices: { keepEmptyDirectories: false, keepDeletedRefs: false },
        }),
      ),
    ).toContain('1 branch or tag deleted in the origin was not kept: v1 (deleted in r9).');
    expect(other).toContain('(keep_empty_directories: true)');
    expect(other).toContain('are not kept. (keep_refs_deleted_in_history: false)');
  });

  it('says what became of the large files, naming them once moved or removed', () => {
    const listed = [{ refName: 'refs/heads/main', path: 'big.bin', oid: 'b'.repeat(40), size: 104_857_600 }];
    const largeFiles = { action: 'removed' as const, count: 1, size: 104_857_600, listed };
    expect(text(report({ largeFiles }))).toContain(
      '1 file over the size limit (104.9 MB) was removed from the history: big.bin.',
    );
    expect(text(report({ largeFiles: { ...largeFiles, action: 'moved_to_lfs' } }))).toContain(
      'was moved to Git LFS: big.bin.',
    );
    expect(largeFilesSentence('undecided', 2, '3.0 MB')).toBe(
      '2 files over the size limit (3.0 MB) wait for your choice: keep them with Git LFS or remove them.',
    );
    expect(text(report({ largeFiles: { ...largeFiles, action: 'none', count: 0, listed: [] } }))).toContain(
      'No file is over the size limit.',
    );
  });

  it('says when nothing is known yet, and when everything looked for came over', () => {
    expect(text(report({ status: 'partial' }))).toContain('Nothing is known yet');
    const clean = report({
      findings: { renamed_refs: findingOf([]) },
      largeFiles: { action: 'none', count: 0, size: 0, listed: [] },
    });
    expect(text(clean)).toContain('Everything the import looked for came over as it was.');
    expect(text(clean)).toContain('No file is over the size limit.');
    expect(text({ ...clean, status: 'partial' })).toContain('came over as it was so far.');
  });

  it('shows names from the origin as text, and names entries by the fields they have', () => {
    const html = reportRegion(
      report({ findings: { tfvc_labels: findingOf([{ name: HOSTILE }]) } }),
    ).toString();
    expect(html).not.toContain(HOSTILE);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const label = (entry: FindingEntry) => entryLabel(entry);
    expect(label({ path: 'trunk/lib', revision: 12 })).toBe('trunk/lib@12');
    expect(label({ changeset: 'abc123' })).toBe('abc123');
    expect(label({ origin_name: 'v1', ref: 'refs/tags/v1_' })).toBe('v1 → v1_');
  });

  it('names the Subversion and Mercurial kinds by the fields the adapters record', () => {
    const words = text(
      report({
        findings: {
          svn_externals: findingOf([
            { path: '/trunk/lib', revision: 4, definition: 'ext1 http://svn.example/ext1\next2 ^/vendor\n' },
          ]),
          svn_properties: findingOf([
            { name: 'svn:keywords', scope: 'path', paths: 3, revisions: 2 },
            { name: 'custom:rev', scope: 'revision', paths: 0, revisions: 1 },
          ]),
          authorless_commits: findingOf([{ revision: 7, author: '(no author) <no-author@uuid>' }]),
          hg_subrepos: findingOf([
            {
              path: 'vendor',
              source: 'https://hg.example/vendor',
              revision: '9f3c',
              kind: 'hg',
              changeset: '5d2a',
            },
          ]),
        },
      }),
    );
    expect(words).toContain(
      '1 svn:externals definition was not followed: /trunk/lib in r4: ext1 http://svn.example/ext1; ext2 ^/vendor.',
    );
    expect(words).toContain(
      'without a Git equivalent were dropped: svn:keywords (on 3 paths), custom:rev (a revision property).',
    );
    expect(words).toContain(
      '1 revision or changeset without an author was given the author “(no author)”, which you can map: r7.',
    );
    expect(words).toContain('1 Mercurial subrepository was not followed (.hgsub and .hgsubstate stay files)');
    expect(words).toContain('vendor (https://hg.example/vendor).');
  });
});
