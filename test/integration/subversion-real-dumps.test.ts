/**
 * Subversion histories nobody on the project wrote (test/fixtures/svn/README.md): each dump is
 * loaded with `svnadmin load`, served by one svnserve on 127.0.0.1 and imported through the
 * adapter. Every branch and tag still in the repository must have a ref holding exactly the files
 * `svn export` gives for its path at the last revision (names, bytes, executable bit, links).
 * Not compared, as docs/decisions.md says they are not carried: empty directories,
 * `svn:externals`, and the `.gitignore` the converter writes from `svn:ignore`; the import report
 * must list each of them (and the rest of what Git cannot hold) as the dump has it.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FindingEntry } from '#domain/import-report';
import type { ImportChoices } from '#domain/imports';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { snapshot } from '#test/tree-snapshot';
import { loadFindings } from '#vcs/findings';
import { type RawJob, rawRepositoryPath } from '#vcs/origin';
import { subversionAdapter } from '#vcs/subversion/adapter';

const exec = promisify(execFile);
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'svn');
/**
 * Each dump: the refs its branches and tags still in Subversion must arrive as besides
 * `refs/heads/main`, the refs kept for what was deleted (`backups/<name>@<rev>`, see
 * docs/decisions.md) that the import makes too, and the report's findings as read in the dump
 * itself (every Subversion kind is looked for: a kind not given here must be found empty).
 */
interface Expected {
  readonly refs: readonly string[];
  readonly kept: readonly string[];
  readonly findings?: Partial<Record<SvnKind, readonly FindingEntry[]>>;
}

const SVN_KINDS = [
  'renamed_refs',
  'kept_deleted_refs',
  'empty_directories',
  'outside_layout_paths',
  'svn_externals',
  'svn_properties',
  'svn_mergeinfo',
  'authorless_commits',
] as const;
type SvnKind = (typeof SVN_KINDS)[number];

const emptyDir = (path: string, ref = 'refs/heads/main') => ({ path, ref, kept: false });
const mergeinfo = (path: string, revision: number, merged: boolean) => ({ path, revision, merged });

const DUMPS: Record<string, Expected> = {
  // Four directories with nothing in them, beside the funny file names.
  'git-t9115-funky-names': {
    refs: [],
    kept: [],
    findings: {
      empty_directories: [
        '/ leading space',
        '/#{bad_directory_name}',
        '/dir name with spaces',
        '/regular_dir_name',
      ].map((path) => emptyDir(path)),
    },
  },
  // branch-c is deleted at r5 and copied again from branch-b at r6; r2 sets mergeinfo on branch-b.
  'git-t9135-svn': {
    refs: ['refs/heads/branch-b', 'refs/heads/branch-c'],
    kept: ['refs/tags/backups/branch-c@5'],
    findings: {
      kept_deleted_refs: [
        {
          kind: 'branch',
          origin_name: 'branch-c',
          ref: 'refs/tags/backups/branch-c@5',
          revision: 5,
          kept: true,
        },
      ],
      svn_mergeinfo: [mergeinfo('/branches/branch-b', 2, false)],
    },
  },
  // tag 1.0.1 is made at r3, deleted at r4 and made again at r6: the first one is kept too.
  'git-t9136-svn': {
    refs: ['refs/heads/1.0', 'refs/tags/1.0', 'refs/tags/1.0.1'],
    kept: ['refs/tags/backups/1.0.1@4'],
    findings: {
      kept_deleted_refs: [
        { kind: 'tag', origin_name: '1.0.1', ref: 'refs/tags/backups/1.0.1@4', revision: 4, kept: true },
      ],
    },
  },
  // Sixteen svn:mergeinfo changes; those whose revision copied from another branch became merges.
  'git-t9151-svn-mergeinfo': {
    refs: [
      ...['b1', 'b2', 'bugfix', 'f1', 'f2', 'left', 'left-sub', 'partial', 'right'].map(
        (b) => `refs/heads/${b}`,
      ),
      'refs/tags/v1.0',
    ],
    kept: [],
    findings: {
      svn_mergeinfo: [
        mergeinfo('/trunk', 11, false),
        mergeinfo('/trunk', 14, true),
        mergeinfo('/trunk', 15, false),
        mergeinfo('/branches/left-sub', 18, true),
        mergeinfo('/branches/left', 21, true),
        mergeinfo('/branches/left', 22, true),
        mergeinfo('/trunk', 23, true),
        mergeinfo('/trunk', 24, false),
        mergeinfo('/trunk', 29, true),
        mergeinfo('/branches/b2', 31, true),
        mergeinfo('/trunk', 32, true),
        mergeinfo('/trunk', 35, true),
        mergeinfo('/trunk', 37, true),
        mergeinfo('/trunk/subdir', 40, true),
        mergeinfo('/trunk', 44, false),
        mergeinfo('/trunk/subdir', 44, false),
      ],
    },
  },
  // Subversion's "greek tree" has two empty directories, A/B/F and A/C; so do its copies under H.
  'svn-descend-into-replace': {
    refs: [],
    kept: [],
    findings: {
      empty_directories: ['A/B/F', 'A/C', 'H/B', 'H/C', 'H/Z/B', 'H/Z/C', 'X'].map((path) =>
        emptyDir(`/trunk/${path}`),
      ),
    },
  },
  'svn-mergeinfo_included_full': {
    refs: ['refs/heads/B1', 'refs/heads/B2'],
    kept: [],
    findings: {
      empty_directories: [
        emptyDir('/branches/B1/B/F', 'refs/heads/B1'),
        emptyDir('/branches/B1/C', 'refs/heads/B1'),
        emptyDir('/branches/B2/B/F', 'refs/heads/B2'),
        emptyDir('/branches/B2/C', 'refs/heads/B2'),
        emptyDir('/trunk/B/F'),
        emptyDir('/trunk/C'),
      ],
      svn_mergeinfo: [
        mergeinfo('/branches/B1', 10, true),
        mergeinfo('/branches/B2', 11, false),
        mergeinfo('/branches/B1', 13, false),
        mergeinfo('/branches/B1/B/E', 14, false),
        mergeinfo('/branches/B1/B/E', 15, false),
      ],
    },
  },
  // `test.txt` beside trunk at r1; revision properties `foo` (r0) and `svn:mergeinfo` (r1).
  'svn-revprops': {
    refs: [],
    kept: [],
    findings: {
      empty_directories: [emptyDir('/trunk/A/B/F'), emptyDir('/trunk/A/C')],
      outside_layout_paths: [{ path: '/test.txt', revision: 1 }],
      svn_properties: [
        { name: 'foo', scope: 'revision', paths: 0, revisions: 1 },
        { name: 'svn:mergeinfo', scope: 'revision', paths: 0, revisions: 1 },
      ],
    },
  },
  // Revision 1 has no svn:author.
  'svn-no-author': {
    refs: [],
    kept: [],
    findings: {
      authorless_commits: [
        { revision: 1, author: '(no author) <no-author@55b1b577-cf20-0410-8f4d-bb837066729e>' },
      ],
    },
  },
  // Four revisions each set svn:externals on the root (to URLs svn itself finds invalid).
  'svn-invalid-uris-in-repo': {
    refs: [],
    kept: [],
    findings: {
      svn_externals: [
        'foo:://host:-/path X\n',
        'foo://host::/path X\n',
        'foo://host:123xx/path X\n',
        'foo://host:123:123/path X\n',
      ].map((definition, index) => ({ path: '/', revision: index + 1, definition })),
    },
  },
  // Three empty project folders; svn:eol-style on two files.
  'svn-skeleton': {
    refs: [],
    kept: [],
    findings: {
      empty_directories: ['X', 'Y', 'Z'].map((name) => emptyDir(`/Projects/Project-${name}`)),
      svn_properties: [{ name: 'svn:eol-style', scope: 'path', paths: 2, revisions: 2 }],
    },
  },
  // `unrelated` beside trunk; trunk.badtag renamed away at r8, trunk.goodtag deleted at r10.
  'hg-tags': {
    refs: ['refs/tags/trunk.goodtag', 'refs/tags/trunk.v1'],
    kept: ['refs/tags/backups/trunk.badtag@8', 'refs/tags/backups/trunk.goodtag@10'],
    findings: {
      kept_deleted_refs: [
        {
          kind: 'tag',
          origin_name: 'trunk.badtag',
          ref: 'refs/tags/backups/trunk.badtag@8',
          revision: 8,
          kept: true,
        },
        {
          kind: 'tag',
          origin_name: 'trunk.goodtag',
          ref: 'refs/tags/backups/trunk.goodtag@10',
          revision: 10,
          kept: true,
        },
      ],
      outside_layout_paths: [{ path: '/unrelated', revision: 1 }],
    },
  },
  // A file directly in branches/ (r2); old moved to old2 (r8) and back (r9).
  'hg-branches': {
    refs: ['refs/heads/old', 'refs/heads/old3'],
    kept: ['refs/tags/backups/old@8', 'refs/tags/backups/old2@9'],
    findings: {
      kept_deleted_refs: [
        { kind: 'branch', origin_name: 'old', ref: 'refs/tags/backups/old@8', revision: 8, kept: true },
        { kind: 'branch', origin_name: 'old2', ref: 'refs/tags/backups/old2@9', revision: 9, kept: true },
      ],
      outside_layout_paths: [{ path: '/branches/notinbranch', revision: 2 }],
    },
  },
  // An svnsync mirror: its revision 0 carries svnsync's own properties.
  'hg-empty': {
    refs: [],
    kept: [],
    findings: {
      svn_properties: ['svn:sync-from-url', 'svn:sync-from-uuid', 'svn:sync-last-merged-rev'].map((name) => ({
        name,
        scope: 'revision',
        paths: 0,
        revisions: 1,
      })),
    },
  },
};

let root: string;
let server: SvnServer;
const env = () => ({ PATH: process.env.PATH, HOME: root, LC_ALL: 'C.UTF-8', GIT_CONFIG_NOSYSTEM: '1' });
const run = async (command: string, args: string[], cwd?: string) =>
  (await exec(command, args, { cwd, env: env(), maxBuffer: 64 * 1024 * 1024 })).stdout;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svn-real-'));
  await Promise.all(
    Object.keys(DUMPS).map(async (name) => {
      const repo = join(root, 'repos', name);
      await mkdir(repo, { recursive: true });
      await run('svnadmin', ['create', repo]);
      await run('sh', ['-c', 'svnadmin load -q "$1" < "$2"', 'sh', repo, join(FIXTURES, `${name}.dump`)]);
    }),
  );
  server = await serveSvn(join(root, 'repos'));
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** The branches and tags at the repository's last revision, as `refs/…` → Subversion path. */
async function svnBranches(url: string): Promise<Map<string, string>> {
  const list = async (path: string) =>
    (await run('svn', ['list', `${url}/${path}@`]).catch(() => ''))
      .split('\n')
      .filter((entry) => entry.endsWith('/'))
      .map((entry) => entry.slice(0, -1));
  const top = await list('');
  if (!top.includes('trunk')) return new Map([['refs/heads/main', '']]);
  return new Map([
    ['refs/heads/main', 'trunk'],
    ...(await list('branches')).map((name) => [`refs/heads/${name}`, `branches/${name}`] as const),
    ...(await list('tags')).map((name) => [`refs/tags/${name}`, `tags/${name}`] as const),
  ]);
}

/** Imports one of the dumps through the adapter; returns the job's work directory. */
async function importDump(name: string, choices?: ImportChoices): Promise<string> {
  const work = await mkdtemp(join(root, `job-${name}-`));
  const raw: RawJob = { url: server.url(name), allowedAddresses: ['127.0.0.1'], workDir: work, choices };
  const adapter = subversionAdapter();
  for (let chunks = 1; !(await adapter.importRawChunk(raw, 600_000, () => {})).done; chunks++)
    if (chunks > 20) throw new Error('the import did not finish');
  return work;
}

describe('real Subversion dumps', () => {
  it.each(Object.entries(DUMPS))(
    '%s: every branch and tag matches svn export',
    async (name, expectedFindings) => {
      const { refs: extraRefs, kept } = expectedFindings;
      const work = await importDump(name);
      const git = rawRepositoryPath(work);
      const findings = await loadFindings(work);
      for (const kind of SVN_KINDS.filter((kind) => kind !== 'renamed_refs')) {
        const listed = expectedFindings.findings?.[kind] ?? [];
        expect({ kind, ...findings[kind] }).toEqual({ kind, count: listed.length, listed });
      }
      const url = `file://${join(root, 'repos', name)}`;
      const expected = await svnBranches(url);
      // A renamed branch or tag is compared under the ref it arrived as.
      for (const { kind, origin_name: origin, ref } of (await loadFindings(work)).renamed_refs?.listed ??
        []) {
        const path = `${kind === 'tag' ? 'tags' : 'branches'}/${String(origin)}`;
        for (const [key, value] of expected) if (value === path) expected.delete(key);
        expected.set(String(ref), path);
      }
      const refs = (await run('git', ['for-each-ref', '--format=%(refname)', 'refs/heads', 'refs/tags'], git))
        .split('\n')
        .filter(Boolean);
      expect([...expected.keys()].sort()).toEqual(['refs/heads/main', ...extraRefs].sort());
      expect(refs.sort()).toEqual([...expected.keys(), ...kept].sort());
      for (const [ref, path] of expected) {
        const out = await mkdtemp(join(work, 'compare-'));
        await run('svn', [
          'export',
          '-q',
          '--ignore-externals',
          '--ignore-keywords',
          `${url}/${path}@`,
          join(out, 'svn'),
        ]);
        await mkdir(join(out, 'git'));
        await run('sh', ['-c', 'git archive "$1" | tar -x -C "$2"', 'sh', ref, join(out, 'git')], git);
        const [exported, imported] = await Promise.all([
          snapshot(join(out, 'svn')),
          snapshot(join(out, 'git')),
        ]);
        if (!exported.has('.gitignore')) imported.delete('.gitignore');
        expect({ ref, files: Object.fromEntries(imported) }).toEqual({
          ref,
          files: Object.fromEntries(exported),
        });
      }
    },
  );
});

describe("the owner's choices and the identities Subversion lacks", () => {
  it('keeps each empty directory as an empty .gitignore when asked, and says so', async () => {
    const work = await importDump('svn-mergeinfo_included_full', {
      keepEmptyDirectories: true,
      keepDeletedRefs: true,
    });
    const findings = await loadFindings(work);
    const listed = DUMPS['svn-mergeinfo_included_full']?.findings?.empty_directories ?? [];
    expect(findings.empty_directories).toEqual({
      count: listed.length,
      listed: listed.map((entry) => ({ ...entry, kept: true })),
    });
    const git = rawRepositoryPath(work);
    const out = await mkdtemp(join(work, 'compare-'));
    const url = `file://${join(root, 'repos', 'svn-mergeinfo_included_full')}`;
    await run('svn', ['export', '-q', `${url}/trunk@`, join(out, 'svn')]);
    await mkdir(join(out, 'git'));
    await run('sh', ['-c', 'git archive main | tar -x -C "$1"', 'sh', join(out, 'git')], git);
    const exported = await snapshot(join(out, 'svn'));
    for (const dir of ['B/F', 'C']) exported.set(`${dir}/.gitignore`, 'file false ');
    expect(Object.fromEntries(await snapshot(join(out, 'git')))).toEqual(Object.fromEntries(exported));
  });

  it('drops the refs of deleted tags when asked, and lists them as not kept', async () => {
    const work = await importDump('hg-tags', { keepEmptyDirectories: false, keepDeletedRefs: false });
    const refs = (await run('git', ['for-each-ref', '--format=%(refname)'], rawRepositoryPath(work)))
      .split('\n')
      .filter(Boolean);
    expect(refs.sort()).toEqual(['refs/heads/main', 'refs/tags/trunk.goodtag', 'refs/tags/trunk.v1']);
    expect((await loadFindings(work)).kept_deleted_refs?.listed).toEqual([
      { kind: 'tag', origin_name: 'trunk.badtag', ref: null, revision: 8, kept: false },
      { kind: 'tag', origin_name: 'trunk.goodtag', ref: null, revision: 10, kept: false },
    ]);
  });

  it('gives a revision without author an identity of the repository, listed among the authors', async () => {
    const work = await importDump('svn-no-author');
    const uuid = '55b1b577-cf20-0410-8f4d-bb837066729e';
    const log = await run('git', ['log', '--all', '--format=%an <%ae>|%cn <%ce>'], rawRepositoryPath(work));
    expect(log.trim()).toBe(`(no author) <no-author@${uuid}>|(no author) <no-author@${uuid}>`);
    const raw: RawJob = { url: server.url('svn-no-author'), allowedAddresses: ['127.0.0.1'], workDir: work };
    expect(await subversionAdapter().authors(raw)).toEqual([
      expect.objectContaining({ name: '(no author)', remoteName: '(no author)', email: `no-author@${uuid}` }),
    ]);
  });
});
