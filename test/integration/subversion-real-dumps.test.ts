/**
 * Subversion histories nobody on the project wrote (test/fixtures/svn/README.md): each dump is
 * loaded with `svnadmin load`, served by one svnserve on 127.0.0.1 and imported through the
 * adapter. Every branch and tag still in the repository must have a ref holding exactly the files
 * `svn export` gives for its path at the last revision (names, bytes, executable bit, links).
 * Not compared, as docs/decisions.md says they are not carried: empty directories,
 * `svn:externals`, and the `.gitignore` the converter writes from `svn:ignore`.
 */
import { execFile } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { loadFindings } from '#vcs/findings';
import { type RawJob, rawRepositoryPath } from '#vcs/origin';
import { subversionAdapter } from '#vcs/subversion/adapter';

const exec = promisify(execFile);
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'svn');
/**
 * Each dump: the refs its branches and tags still in Subversion must arrive as besides
 * `refs/heads/main`, and the refs kept for what was deleted (`backups/<name>@<rev>`, see
 * docs/decisions.md) that the import makes too.
 */
const DUMPS: Record<string, { readonly refs: readonly string[]; readonly kept: readonly string[] }> = {
  'git-t9115-funky-names': { refs: [], kept: [] },
  // branch-c is deleted at r5 and copied again from branch-b at r6.
  'git-t9135-svn': {
    refs: ['refs/heads/branch-b', 'refs/heads/branch-c'],
    kept: ['refs/tags/backups/branch-c@5'],
  },
  // tag 1.0.1 is made at r3, deleted at r4 and made again at r6: the first one is kept too.
  'git-t9136-svn': {
    refs: ['refs/heads/1.0', 'refs/tags/1.0', 'refs/tags/1.0.1'],
    kept: ['refs/tags/backups/1.0.1@4'],
  },
  'git-t9151-svn-mergeinfo': {
    refs: [
      ...['b1', 'b2', 'bugfix', 'f1', 'f2', 'left', 'left-sub', 'partial', 'right'].map(
        (b) => `refs/heads/${b}`,
      ),
      'refs/tags/v1.0',
    ],
    kept: [],
  },
  'svn-descend-into-replace': { refs: [], kept: [] },
  'svn-mergeinfo_included_full': { refs: ['refs/heads/B1', 'refs/heads/B2'], kept: [] },
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

/** Every file and link under `dir`: path → `file <executable> <base64>` or `link <target>`. */
async function snapshot(
  dir: string,
  prefix = '',
  into = new Map<string, string>(),
): Promise<Map<string, string>> {
  for (const name of await readdir(dir)) {
    const full = join(dir, name);
    const stat = await lstat(full);
    if (stat.isDirectory()) await snapshot(full, `${prefix}${name}/`, into);
    else if (stat.isSymbolicLink()) into.set(prefix + name, `link ${await readlink(full)}`);
    else
      into.set(
        prefix + name,
        `file ${(stat.mode & 0o111) !== 0} ${(await readFile(full)).toString('base64')}`,
      );
  }
  return into;
}

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

describe('real Subversion dumps', () => {
  it.each(Object.entries(DUMPS))(
    '%s: every branch and tag matches svn export',
    async (name, { refs: extraRefs, kept }) => {
      const work = await mkdtemp(join(root, `job-${name}-`));
      const raw: RawJob = { url: server.url(name), allowedAddresses: ['127.0.0.1'], workDir: work };
      const adapter = subversionAdapter();
      for (let chunks = 1; !(await adapter.importRawChunk(raw, 600_000, () => {})).done; chunks++)
        if (chunks > 20) throw new Error('the import did not finish');
      const git = rawRepositoryPath(work);
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
