import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitPlumbing } from '#test/git-plumbing';
import { prepareHome } from '#vcs/git-command';
import { type GitJob, rewriteHistory } from '#vcs/history';

/*
 * The history step drops `.hg` entries git stores (issue 28, item 5) where they are hardest to
 * see: an empty file named `.hg` whose blob is also README's (git names each object once, by the
 * first path it meets it at), and a `.H\u200cG.` folder (`.hg` on HFS+ and NTFS) that a merge
 * brings although neither parent has it.
 */

let root: string;
let job: GitJob;
let raw: string;
const commits: Record<string, string> = {};

const git = (args: string[], input?: string) => gitPlumbing(raw, root, args, input);
const commit = (name: string, tree: string, parents: string[]) => {
  commits[name] = git([
    ...['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', 'commit-tree', tree],
    ...parents.flatMap((parent) => ['-p', commits[parent] ?? '']),
    ...['-m', name],
  ]);
};

const rewrite = (out: string) =>
  rewriteHistory(raw, join(root, out), { authors: [], lfs: 'none', thresholdBytes: 1_000_000 }, job);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'history-hg-'));
  job = { home: join(root, 'home'), timeoutMs: 60_000 };
  await prepareHome(job.home, []);
  raw = join(root, 'raw.git');
  spawnSync('git', ['init', '--quiet', '--bare', raw]);
  const empty = git(['hash-object', '-w', '--stdin'], '');
  const text = git(['hash-object', '-w', '--stdin'], 'text\n');
  const hooks = git(['hash-object', '-w', '--stdin'], '[hooks]\n');
  const readme = `100644 blob ${empty}\tREADME\n`;
  const docs = `040000 tree ${git(['mktree'], `100644 blob ${text}\ta.txt\n`)}\tdocs\n`;
  const lib = `040000 tree ${git(['mktree'], `040000 tree ${git(['mktree'], `100644 blob ${hooks}\thgrc\n`)}\t.H\u200cG.\n`)}\tlib\n`;
  commit('first', git(['mktree'], readme), []);
  commit('side', git(['mktree'], `${readme}100644 blob ${empty}\t.hg\n`), ['first']);
  commit('main', git(['mktree'], `${readme}${docs}`), ['first']);
  commit('merge', git(['mktree'], `${readme}${docs}100644 blob ${empty}\t.hg\n${lib}`), ['main', 'side']);
  git(['update-ref', 'refs/heads/main', commits.merge ?? '']);
  git(['symbolic-ref', 'HEAD', 'refs/heads/main']);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('rewriteHistory on a history holding .hg entries', () => {
  it('drops an empty .hg file and a .hg folder only a merge holds, each listed with its commit', async () => {
    const result = await rewrite('out-1.git');

    expect(result.rewritten).toBe(true);
    expect(result.unstorablePaths).toEqual([
      { commit: commits.side, path: '.hg', reason: 'hg_metadata' },
      { commit: commits.merge, path: 'lib/.H\u200cG./hgrc', reason: 'hg_metadata' },
    ]);
    const out = join(root, 'out-1.git');
    const files = spawnSync('git', ['-C', out, 'log', '--all', '--format=', '--name-only'], {
      encoding: 'utf8',
    });
    expect([...new Set(files.stdout.split('\n').filter(Boolean))].sort()).toEqual(['README', 'docs/a.txt']);
    expect(result.commitMap?.get(commits.first ?? '')).toBe(commits.first);
  });

  it('drops them again when the history gained a commit without any', async () => {
    await rewrite('out-2.git');
    commit(
      'later',
      git(['mktree'], `100644 blob ${git(['hash-object', '-w', '--stdin'], 'more\n')}\tREADME\n`),
      ['merge'],
    );
    git(['update-ref', 'refs/heads/main', commits.later ?? '']);

    const result = await rewrite('out-3.git');

    expect(result.rewritten).toBe(true);
    expect(result.unstorablePaths.map(({ path }) => path)).toEqual(['.hg', 'lib/.H\u200cG./hgrc']);
  });
});
