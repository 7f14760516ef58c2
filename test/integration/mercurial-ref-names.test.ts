/**
 * Every Mercurial head, bookmark and tag arrives under a unique, valid Git ref (the naming scheme
 * of `functions/domain/ref-names.ts`), and every rename is recorded in the job's findings
 * (`renamed_refs`).
 *
 * The origin reproduces the branch, bookmark and tag names of the smoke test of frej/fast-export
 * (https://github.com/frej/fast-export, `t/smoke-test.t`, GPL-2.0): only the names and the shape of
 * the history are copied, no code. Two names are ours: a branch `a` beside `a/b` (Git cannot hold
 * both `branches/a` and `branches/a/b`), and a bookmark `branches/feature` that asks for the very
 * ref of the branch `feature`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OriginServer } from '#local/git-origins';
import { serveHg } from '#local/hg-origins';
import { FAST_EXPORT_BRANCH_NAMES } from '#test/fast-export-names';
import { loadFindings } from '#vcs/findings';
import { mercurialAdapter } from '#vcs/mercurial/adapter';
import { rawRepositoryPath } from '#vcs/origin';

const exec = promisify(execFile);

const git = async (cwd: string, ...args: string[]) =>
  (await exec('git', args, { cwd, env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } }))
    .stdout;

const ODD_BRANCHES = FAST_EXPORT_BRANCH_NAMES;

let root: string;
let work: string;
let origin: OriginServer;
let repo: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hg-names-'));
  work = await mkdtemp(join(tmpdir(), 'hg-names-work-'));
  repo = join(root, 'smoke');
  env = {
    PATH: process.env.PATH,
    HOME: root,
    HGRCPATH: '',
    HGPLAIN: '1',
    HGENCODING: 'utf-8',
    HGUSER: 'Grevious Bodily Harmsworth <gbh@example.com>',
  };
  const hg = (...args: string[]) => exec('hg', args, { cwd: repo, env });
  let file = 0;
  const commit = async (message: string, date: string, user?: string) => {
    file += 1;
    await writeFile(join(repo, `f${file}.txt`), `${message}\n`);
    await hg('commit', '-q', '-A', '-d', date, '-m', message, ...(user ? ['-u', user] : []));
  };
  await exec('hg', ['init', repo], { env });
  await commit('r0', '2023-03-17 01:00Z');
  await hg('bookmark', 'bm0');
  await hg('branch', '-q', 'mainline');
  await commit('r1', '2023-03-17 02:00Z');
  await hg('tag', '-d', '2023-03-17 02:10Z', '2019 Spring R2');
  await commit('r2', '2023-03-17 03:00Z');
  await hg('bookmark', 'bm1');
  await commit('r3', '2023-03-17 04:00Z', 'badly-formed-user');
  await hg('branch', '-q', 'feature');
  await commit('feature', '2023-03-17 05:00Z');
  await hg('bookmark', 'bm2');
  for (const [i, name] of [...ODD_BRANCHES, 'a'].entries()) {
    await hg('branch', '-q', '--', name);
    await commit(`Added file in branch ${name}`, `2023-03-17 ${String(6 + i).padStart(2, '0')}:00Z`);
  }
  await hg('bookmark', 'bm-for-the-rest');
  await hg('bookmark', '-r', 'feature', 'branches/feature');
  origin = await serveHg({ repo });
}, 60_000);

afterAll(async () => {
  await origin?.close();
  await rm(root, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe('Mercurial ref names', () => {
  it('brings every head, bookmark and tag under its own valid ref, keeps valid names, records renames', async () => {
    const adapter = mercurialAdapter();
    const workDir = await mkdtemp(join(work, 'job-'));
    const raw = { url: origin.url, allowedAddresses: ['127.0.0.1'], workDir };
    let last: Awaited<ReturnType<typeof adapter.importRawChunk>>;
    let chunks = 0;
    do last = await adapter.importRawChunk(raw, 60_000, () => undefined);
    while (!last.done && ++chunks < 10);
    expect(last.done).toBe(true);

    const gitRepo = rawRepositoryPath(workDir);
    const lines = (await git(gitRepo, 'for-each-ref', '--format=%(refname) %(subject)')).trim().split('\n');
    const refs = new Map(
      lines.map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]),
    );
    for (const ref of refs.keys()) await git(gitRepo, 'check-ref-format', ref);
    const renames = (await loadFindings(workDir)).renamed_refs?.listed ?? [];
    const renamed = new Map(
      renames.map((entry) => [`${String(entry.kind)} ${String(entry.origin_name)}`, String(entry.ref)]),
    );
    const bookmarkRefs = new Set(
      renames.filter((entry) => entry.kind === 'bookmark').map((entry) => entry.ref),
    );

    // Every head (closed ones too) is the tip of a branch ref; every bookmark has a ref of its own.
    const hgHeads = (
      await exec('hg', ['heads', '--closed', '-T', '{desc|firstline}\n'], { cwd: repo, env })
    ).stdout
      .trim()
      .split('\n');
    expect(hgHeads).toHaveLength(18);
    const branchRefs = [...refs].filter(
      ([ref]) =>
        (ref === 'refs/heads/main' || ref.startsWith('refs/heads/branches/')) && !bookmarkRefs.has(ref),
    );
    expect(branchRefs.map(([, subject]) => subject).sort()).toEqual([...hgHeads].sort());
    const bookmarks = ['bm0', 'bm1', 'bm2', 'bm-for-the-rest', 'branches/feature'];
    const tags = [...refs.keys()].filter((ref) => ref.startsWith('refs/tags/'));
    expect(refs.size).toBe(hgHeads.length + bookmarks.length + tags.length);
    expect(tags).toHaveLength(1);

    // Names that were valid refs keep them.
    for (const ref of [
      'refs/heads/main',
      'refs/heads/branches/mainline',
      'refs/heads/branches/feature',
      'refs/heads/branches/a',
      'refs/heads/branches/a.b',
      'refs/heads/branches/___3',
      'refs/heads/branches/__2',
      'refs/heads/branches/_1',
      'refs/heads/branches/åäö',
      'refs/heads/bm0',
      'refs/heads/bm1',
      'refs/heads/bm2',
      'refs/heads/bm-for-the-rest',
    ])
      expect(refs.has(ref), ref).toBe(true);
    expect(refs.get('refs/heads/branches/feature')).toBe('feature');
    expect(refs.get('refs/heads/branches/a')).toBe('Added file in branch a');

    // Every other name is renamed, and the rename is recorded: origin name → the ref it arrived under.
    const expectedRenames = [
      ...ODD_BRANCHES.filter((name) => !['a.b', '___3', '__2', '_1', 'åäö'].includes(name)).map(
        (name) => `branch ${name}`,
      ),
      'bookmark branches/feature',
      'tag 2019 Spring R2',
    ];
    expect([...renamed.keys()].sort()).toEqual(expectedRenames.sort());
    for (const [key, ref] of renamed) {
      expect(refs.has(ref), `${key} → ${ref}`).toBe(true);
      if (key.startsWith('branch '))
        expect(refs.get(ref)).toBe(`Added file in branch ${key.slice('branch '.length)}`);
    }
    expect(refs.get(renamed.get('bookmark branches/feature') ?? '')).toBe('feature');
    expect(renamed.get('tag 2019 Spring R2')).toMatch(/^refs\/tags\/2019_Spring_R2-[0-9a-f]{8}$/);
  }, 60_000);
});
