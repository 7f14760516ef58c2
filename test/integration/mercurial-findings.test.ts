/**
 * What a Mercurial import records in the job's findings besides renamed refs: closed branches (and
 * what became of them), subrepositories (not followed; `.hgsub` and `.hgsubstate` stay as files)
 * and changesets without an author (and the identity they got). One origin, imported once.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Findings } from '#domain/import-report';
import type { OriginServer } from '#local/git-origins';
import { serveHg } from '#local/hg-origins';
import { rawJobs } from '#test/raw-jobs';
import { loadFindings } from '#vcs/findings';
import { mercurialAdapter } from '#vcs/mercurial/adapter';
import { type OriginAuthor, type RawJob, rawRepositoryPath } from '#vcs/origin';

const exec = promisify(execFile);

/**
 * Mercurial has refused an empty user since 2010 (`changelog.add`), but changesets from before
 * carry one and every later Mercurial pulls them. This commits one the way old Mercurial did: a
 * user that passes the check and is written as nothing.
 */
const AUTHORLESS_COMMIT = String.raw`
import sys
from mercurial import context, hg, ui as uimod
class Nobody(bytes):
    def strip(self, *args): return self
    def __bool__(self): return True
repo = hg.repository(uimod.ui.load(), sys.argv[1].encode())
def content(repo, memctx, path):
    return context.memfilectx(repo, memctx, path, b'written by nobody\n')
with repo.wlock(), repo.lock(), repo.transaction(b'authorless'):
    ctx = context.memctx(repo, [repo[b'tip'].node(), None], b'nobody wrote this', [b'nobody.txt'],
                         content, user=Nobody(b''), date=b'1700000600 0')
    sys.stdout.write(repo.commitctx(ctx).hex())
`;

const NO_AUTHOR = '(no author) <no-author@mercurial.invalid>';

let root: string;
let repo: string;
let origin: OriginServer;
let job: RawJob;
let findings: Findings;
const revisions: Record<string, string> = {};

const env = () => ({ PATH: process.env.PATH, HOME: root, HGRCPATH: '', HGPLAIN: '1', HGENCODING: 'utf-8' });
const hg = async (cwd: string, ...args: string[]) => (await exec('hg', args, { cwd, env: env() })).stdout;
const git = async (...args: string[]) =>
  (await exec('git', ['--git-dir', rawRepositoryPath(job.workDir), ...args])).stdout;
const node = async (cwd: string, rev = '.') => (await hg(cwd, 'log', '-r', rev, '-T', '{node}')).trim();

async function commit(message: string, user = 'Ada <ada@example.org>', ...extra: string[]) {
  await hg(repo, 'commit', '-q', '-u', user, '-d', '1700000000 0', '-m', message, ...extra);
  revisions[message] = await node(repo);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hg-findings-'));
  repo = join(root, 'origin');
  await mkdir(repo);
  await hg(repo, 'init');
  await writeFile(join(repo, 'a.txt'), 'one\n');
  await hg(repo, 'add', '-q', 'a.txt');
  await commit('one');

  // Two subrepositories, one with a relative source and one at a URL nobody may reach.
  for (const name of ['sub', 'vendor']) {
    const dir = join(repo, name);
    await hg(repo, 'init', dir);
    await writeFile(join(dir, 'x.txt'), `${name}\n`);
    await hg(dir, 'add', '-q', 'x.txt');
    await hg(dir, 'commit', '-q', '-u', 'Ada <ada@example.org>', '-d', '1700000000 0', '-m', name);
    revisions[`${name} tip`] = await node(dir);
  }
  await writeFile(join(repo, '.hgsub'), 'sub = sub\nvendor = https://hg.example.org/vendor\n');
  await hg(repo, 'add', '-q', '.hgsub');
  await commit('subrepos');

  // `stable`: every head closed. `feature`: one head closed, its tip open (not a closed branch).
  await hg(repo, 'branch', '-q', 'stable');
  await writeFile(join(repo, 'b.txt'), 'stable\n');
  await hg(repo, 'add', '-q', 'b.txt');
  await commit('on stable');
  await commit('close stable', 'Ada <ada@example.org>', '--close-branch');
  await hg(repo, 'update', '-q', revisions.subrepos ?? '');
  await hg(repo, 'branch', '-q', 'feature');
  await writeFile(join(repo, 'c.txt'), 'feature\n');
  await hg(repo, 'add', '-q', 'c.txt');
  await commit('feature one');
  await commit('close a feature head', 'Ada <ada@example.org>', '--close-branch');
  await hg(repo, 'update', '-q', revisions['feature one'] ?? '');
  await writeFile(join(repo, 'c.txt'), 'feature two\n');
  await commit('feature two');

  // Two changesets without an author: `<>` (neither name nor email), and an empty user.
  await hg(repo, 'update', '-q', 'default');
  await writeFile(join(repo, 'a.txt'), 'two\n');
  await commit('angle brackets only', '<>');
  const python = (await hg(repo, 'debuginstall', '-T', '{pythonexe}')).trim();
  revisions.nobody = (await exec(python, ['-c', AUTHORLESS_COMMIT, repo], { env: env() })).stdout.trim();

  origin = await serveHg({ repo });
  job = await rawJobs(() => root)(origin.url);
  const adapter = mercurialAdapter();
  for (let chunk = 0; chunk < 10; chunk += 1)
    if ((await adapter.importRawChunk(job, 60_000, () => undefined)).done) break;
  findings = await loadFindings(job.workDir);
}, 120_000);

afterAll(async () => {
  await origin?.close();
  await rm(root, { recursive: true, force: true });
});

describe('Mercurial import findings', () => {
  it('keeps a branch whose heads are all closed, and records it with its ref', async () => {
    expect(findings.closed_branches).toEqual({
      count: 1,
      listed: [{ origin_name: 'stable', ref: 'refs/heads/branches/stable', kept: true }],
    });
    expect((await git('log', '-1', '--format=%s', 'refs/heads/branches/stable')).trim()).toBe('close stable');
    // A branch with an open head is not closed; its closed head is kept under hg/<branch>/<12 hex>.
    expect((await git('log', '-1', '--format=%s', 'refs/heads/branches/feature')).trim()).toBe('feature two');
    const closedHead = `refs/heads/hg/feature/${revisions['close a feature head']?.slice(0, 12)}`;
    expect((await git('log', '-1', '--format=%s', closedHead)).trim()).toBe('close a feature head');
  });

  it('lists subrepositories with their source and revision; .hgsub and .hgsubstate stay as files', async () => {
    const subrepos = findings.hg_subrepos;
    expect(subrepos?.count).toBe(2);
    // Every ref's changeset from `subrepos` on has them; each is listed once, with the first.
    expect(subrepos?.listed).toEqual([
      {
        path: 'sub',
        source: 'sub',
        revision: revisions['sub tip'],
        kind: 'hg',
        changeset: expect.stringMatching(/^[0-9a-f]{40}$/),
      },
      {
        path: 'vendor',
        source: 'https://hg.example.org/vendor',
        revision: revisions['vendor tip'],
        kind: 'hg',
        changeset: expect.stringMatching(/^[0-9a-f]{40}$/),
      },
    ]);
    const tree = (await git('ls-tree', '-r', '--name-only', 'refs/heads/main')).trim().split('\n');
    expect(tree.sort()).toEqual(['.hgsub', '.hgsubstate', 'a.txt', 'nobody.txt']);
    expect(await git('show', 'refs/heads/main:.hgsubstate')).toBe(
      `${revisions['sub tip']} sub\n${revisions['vendor tip']} vendor\n`,
    );
  });

  it('records changesets without an author and gives them the no-author identity', async () => {
    expect(findings.authorless_commits).toEqual({
      count: 2,
      listed: [
        { changeset: revisions['angle brackets only'], user: '<>', author: NO_AUTHOR },
        { changeset: revisions.nobody, user: '', author: NO_AUTHOR },
      ],
    });
    expect((await git('log', '-2', '--format=%an <%ae>|%cn <%ce>|%s', 'refs/heads/main')).trim()).toBe(
      `${NO_AUTHOR}|${NO_AUTHOR}|nobody wrote this\n${NO_AUTHOR}|${NO_AUTHOR}|angle brackets only`,
    );
    const authors: readonly OriginAuthor[] = await mercurialAdapter().authors(job);
    expect(authors.filter((author) => author.name === '(no author)')).toEqual([
      {
        remoteId: expect.any(String),
        remoteName: '<>',
        name: '(no author)',
        email: 'no-author@mercurial.invalid',
      },
    ]);
  });

  it('records every kind it looked for, even when none was found', () => {
    expect(findings.renamed_refs).toEqual({ count: 0, listed: [] });
    expect(Object.keys(findings).sort()).toEqual([
      'authorless_commits',
      'closed_branches',
      'hg_subrepos',
      'renamed_refs',
      'unstorable_paths',
    ]);
  });
});
