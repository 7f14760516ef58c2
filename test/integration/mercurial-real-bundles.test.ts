/**
 * Mercurial histories nobody on the project wrote: Mercurial's own test bundles
 * (test/fixtures/hg/README.md), each unbundled into a repository, all served by one `hg serve`
 * (an hgweb index) on 127.0.0.1 and imported through the adapter. Every head, bookmark and tag
 * must arrive under the ref the naming scheme in docs/importing.md gives it, holding exactly the files
 * `hg archive` writes for that changeset (names, bytes, executable bit, link targets); every
 * changeset and merge must arrive; the findings must say what is known to be in each bundle.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding, Findings } from '#domain/import-report';
import type { OriginServer } from '#local/git-origins';
import { serveHg } from '#local/hg-origins';
import { snapshot } from '#test/tree-snapshot';
import { loadFindings } from '#vcs/findings';
import { mercurialAdapter } from '#vcs/mercurial/adapter';
import { type RawJob, rawRepositoryPath } from '#vcs/origin';

const exec = promisify(execFile);
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hg');
const NONE: Finding = { count: 0, listed: [] };

/** Each bundle (repository name → file), its shape, and the refs renamed because Git refuses the name. */
const BUNDLES: Record<
  string,
  { readonly file: string; readonly heads: number; readonly merges: number; readonly renamed?: RegExp }
> = {
  // Three heads of `default`, one of them a merge.
  rebase: { file: 'rebase.hg', heads: 3, merges: 1 },
  // Copies and renames (Git keeps the files, not the copy records), two heads.
  renames: { file: 'renames.hg', heads: 2, merges: 0 },
  // The named branch `colon:test`: Git refuses `:` in a ref.
  'invalid-branch-name': {
    file: 'test-invalid-branch-name.hg',
    heads: 2,
    merges: 0,
    renamed: /^refs\/heads\/branches\/colon_test-[0-9a-f]{8}$/,
  },
  // An executable file in a folder and a symlink.
  manifest: { file: 'test-manifest.hg', heads: 1, merges: 0 },
  // A symlink that becomes a file on one head and stays a link on another.
  'merge-symlinks': { file: 'test-merge-symlinks.hg', heads: 2, merges: 0 },
  // 63 heads of one branch.
  'hgweb-obs': { file: 'hgweb+obs.hg', heads: 63, merges: 0 },
  // A changeset with an empty message.
  'missing-comment': { file: 'missing-comment.hg', heads: 1, merges: 0 },
};

let root: string;
let origin: OriginServer;
const env = () => ({ PATH: process.env.PATH, HOME: root, HGRCPATH: '', HGPLAIN: '1', LC_ALL: 'C.UTF-8' });
const run = async (command: string, args: string[], cwd?: string) =>
  (await exec(command, args, { cwd, env: env(), maxBuffer: 64 * 1024 * 1024 })).stdout;
const lines = (text: string) => text.split('\n').filter((line) => line !== '');

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hg-real-'));
  await Promise.all(
    Object.entries(BUNDLES).map(async ([name, { file }]) => {
      const repo = join(root, 'repos', name);
      await mkdir(repo, { recursive: true });
      await run('hg', ['init', repo]);
      await run('hg', ['-R', repo, 'unbundle', '-q', join(FIXTURES, file)]);
    }),
  );
  origin = await serveHg({ root: join(root, 'repos') });
}, 60_000);

afterAll(async () => {
  await origin?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/**
 * What `hg archive -r <node> <dir>` writes, for many changesets in one process (hg's start-up is
 * most of an archive's time, and one bundle has 63 heads): the very call `hg archive` makes
 * (`commands.archive` → `archival.archive`, files kind, decoded, everything matched), with
 * `ui.archivemeta` off so no `.hg_archival.txt` is added.
 */
const ARCHIVES = `
import json, sys
from mercurial import archival, hg, scmutil, ui as uimod
ui = uimod.ui.load()
ui.setconfig(b'ui', b'archivemeta', b'false')
repo = hg.repository(ui, sys.argv[1].encode())
for node, dest in json.loads(sys.argv[2]):
    ctx = repo[node.encode()]
    archival.archive(repo, dest.encode(), ctx.node(), b'files', True, scmutil.match(ctx, [], {}), b'')
`;

async function hgArchives(repo: string, targets: readonly (readonly [string, string])[]) {
  const python = (await run('hg', ['debuginstall', '-T', '{pythonexe}'])).trim();
  await run(python, ['-c', ARCHIVES, repo, JSON.stringify(targets)]);
}

/**
 * The refs the scheme in docs/importing.md gives, read from Mercurial itself: each branch's tip (`default` →
 * `main`, others `branches/<name>`), its other heads `hg/<branch>/<12 hex>`, bookmarks, tags.
 */
async function expectedRefs(repo: string): Promise<Map<string, string>> {
  const hg = (...args: string[]) => run('hg', ['-R', repo, ...args]);
  const pairs = (text: string) => lines(text).map((line) => line.split('\0') as [string, string]);
  const tips = new Map(pairs(await hg('branches', '--closed', '-T', '{branch}\\0{node}\\n')));
  const refs = new Map<string, string>();
  for (const [branch, node] of tips)
    refs.set(branch === 'default' ? 'refs/heads/main' : `refs/heads/branches/${branch}`, node);
  for (const [branch, node] of pairs(await hg('heads', '--closed', '-T', '{branch}\\0{node}\\n')))
    if (tips.get(branch) !== node) refs.set(`refs/heads/hg/${branch}/${node.slice(0, 12)}`, node);
  for (const [name, node] of pairs(await hg('bookmarks', '-T', '{bookmark}\\0{node}\\n')))
    refs.set(`refs/heads/${name}`, node);
  for (const [name, node] of pairs(await hg('tags', '-T', '{tag}\\0{node}\\n')))
    if (name !== 'tip') refs.set(`refs/tags/${name}`, node);
  return refs;
}

describe('Mercurial test bundles', () => {
  it.each(Object.entries(BUNDLES))(
    '%s: every head, bookmark and tag matches hg archive; the findings say what is in it',
    async (name, bundle) => {
      const repo = join(root, 'repos', name);
      const work = await mkdtemp(join(root, `job-${name}-`));
      const job: RawJob = { url: `${origin.url}/${name}/`, allowedAddresses: ['127.0.0.1'], workDir: work };
      const adapter = mercurialAdapter();
      for (let chunks = 1; !(await adapter.importRawChunk(job, 600_000, () => {})).done; chunks++)
        if (chunks > 20) throw new Error('the import did not finish');
      const git = rawRepositoryPath(work);
      const findings: Findings = await loadFindings(work);

      // What is known to be in the bundle: no closed branch, subrepository or authorless changeset;
      // a rename only where Git refuses the branch name.
      expect(findings.closed_branches).toEqual(NONE);
      expect(findings.hg_subrepos).toEqual(NONE);
      expect(findings.authorless_commits).toEqual(NONE);
      const expected = await expectedRefs(repo);
      if (bundle.renamed) {
        expect(findings.renamed_refs).toEqual({
          count: 1,
          listed: [
            {
              kind: 'branch',
              origin_name: 'colon:test',
              ref: expect.stringMatching(bundle.renamed),
              reason: 'invalid',
            },
          ],
        });
        const ref = String(findings.renamed_refs?.listed[0]?.ref);
        expected.set(ref, expected.get('refs/heads/branches/colon:test') ?? '');
        expected.delete('refs/heads/branches/colon:test');
      } else expect(findings.renamed_refs).toEqual(NONE);

      const refs = lines(await run('git', ['for-each-ref', '--format=%(refname)'], git));
      expect(refs.sort()).toEqual([...expected.keys()].sort());
      expect(refs.filter((ref) => ref.startsWith('refs/heads/'))).toHaveLength(bundle.heads);
      const revisions = lines(await run('hg', ['-R', repo, 'log', '-T', '{node}\\n'])).length;
      expect(Number(await run('git', ['rev-list', '--all', '--count'], git))).toBe(revisions);
      expect(Number(await run('git', ['rev-list', '--all', '--merges', '--count'], git))).toBe(bundle.merges);

      const out = await mkdtemp(join(work, 'compare-'));
      await hgArchives(
        repo,
        [...expected].map(([ref, node]) => [node, join(out, 'hg', ref)]),
      );
      for (const [ref] of expected) {
        await mkdir(join(out, 'git', ref), { recursive: true });
        await run('sh', ['-c', 'git archive "$1" | tar -x -C "$2"', 'sh', ref, join(out, 'git', ref)], git);
        const [archived, imported] = await Promise.all([
          snapshot(join(out, 'hg', ref)),
          snapshot(join(out, 'git', ref)),
        ]);
        expect({ ref, files: Object.fromEntries(imported) }).toEqual({
          ref,
          files: Object.fromEntries(archived),
        });
      }
    },
    60_000,
  );
});
