import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSvnRepository, type SvnRepository } from '#local/svn-fixtures';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { LOOPBACK_ONLY, rawJobs } from '#test/raw-jobs';
import { stubNetwork } from '#test/stub-network';
import { detectionCandidates, detectOrigin } from '#vcs/adapters';
import { loadFindings } from '#vcs/findings';
import {
  ForbiddenAddress,
  OriginAuthFailed,
  OriginFailed,
  type RawChunk,
  type RawJob,
  rawRepositoryPath,
} from '#vcs/origin';
import { subversionAdapter } from '#vcs/subversion/adapter';

const exec = promisify(execFile);
const ODD_NAMES = [
  ['branches', 'main'],
  ['branches', 'my branch'],
  ['branches', '.hidden'],
  ['branches', '-x'],
  ['branches', 'a..b'],
  ['branches', 'å ö#1'],
  ['tags', 'v1.lock'],
  ['tags', 'rel.'],
  ['tags', 'x@{1}'],
] as const;
const AUTH = { username: 'ada', password: 'pw-Svn42-never-shown' };

const git = async (cwd: string, ...args: string[]) =>
  (await exec('git', args, { cwd, env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } }))
    .stdout;

let root: string;
let work: string;
let std: SvnRepository;
let multi: SvnRepository;
let open: SvnServer;
let locked: SvnServer;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svn-origins-'));
  work = await mkdtemp(join(tmpdir(), 'svn-work-'));
  let odd: SvnRepository;
  [std, multi, , odd] = await Promise.all([
    makeSvnRepository(join(root, 'std'), { largeFileBytes: 4096 }),
    makeSvnRepository(join(root, 'multi'), { projects: ['projA', 'projB'] }),
    makeSvnRepository(join(root, 'flat'), { flat: true }),
    makeSvnRepository(join(root, 'odd')),
  ]);
  // Branch and tag names Git refuses (skipped or fatal to the conversion before), a branch named
  // main, and a change of its own on `my branch`.
  const svn = (...args: string[]) =>
    exec('svn', args, { env: { PATH: process.env.PATH, HOME: root, LC_ALL: 'C.UTF-8' } });
  for (const [folder, name] of ODD_NAMES)
    await svn(
      'copy',
      '-q',
      '-m',
      `Copy ${name}`,
      `${odd.url}/trunk`,
      `${odd.url}/${folder}/${encodeURI(name).replace('#', '%23')}@`,
    );
  const wc = join(root, 'odd-wc');
  await svn('checkout', '-q', `${odd.url}/branches/my branch`, wc);
  await writeFile(join(wc, 'README'), 'changed on my branch\n');
  await svn('commit', '-q', '-m', 'Change my branch', wc);
  [open, locked] = await Promise.all([
    serveSvn(root),
    serveSvn(root, { users: { [AUTH.username]: AUTH.password } }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([open?.close(), locked?.close()]);
  await rm(root, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

const job = rawJobs(() => work);
const access = (url: string, credentials?: typeof AUTH) => ({
  url,
  allowedAddresses: LOOPBACK_ONLY,
  credentials,
});

/** Runs chunks until done; returns the last chunk and how many chunks it took. */
async function importAll(
  adapter: ReturnType<typeof subversionAdapter>,
  raw: RawJob,
  budgetMs: number,
): Promise<{ last: RawChunk; chunks: number; percents: number[] }> {
  const percents: number[] = [];
  for (let chunks = 1; chunks < 50; chunks++) {
    const last = await adapter.importRawChunk(raw, budgetMs, (progress) => {
      if (progress.percent !== null) percents.push(progress.percent);
    });
    if (last.done) return { last, chunks, percents };
  }
  throw new Error('the import did not finish');
}

const refs = async (repo: string) =>
  git(repo, 'for-each-ref', '--format=%(refname) %(objecttype) %(objectname)');

describe('Subversion detection', () => {
  const adapter = subversionAdapter();

  it('finds a standard layout or a flat tree as one project, several projects as choices', async () => {
    expect(await adapter.detect(access(open.url('std/repo')))).toEqual({ kind: 'found', vcs: 'subversion' });
    expect(await adapter.detect(access(open.url('flat/repo')))).toEqual({ kind: 'found', vcs: 'subversion' });
    expect(await adapter.detect(access(open.url('multi/repo')))).toEqual({
      kind: 'multiple',
      choices: [
        { vcs: 'subversion', humanName: 'projA', path: 'projA' },
        { vcs: 'subversion', humanName: 'projB', path: 'projB' },
      ],
    });
    expect(await adapter.detect(access(open.url('multi/repo/projB')))).toEqual({
      kind: 'found',
      vcs: 'subversion',
    });
  }, 20_000);

  it('needs credentials when the server offers no anonymous access, finds nothing where there is no repository', async () => {
    expect(await adapter.detect(access(locked.url('std/repo')))).toEqual({ kind: 'needs_auth' });
    expect(await adapter.detect(access(locked.url('std/repo'), AUTH))).toEqual({
      kind: 'found',
      vcs: 'subversion',
    });
    // svn:// detection checks the credentials (CRAM-MD5): wrong ones are asked for again.
    expect(await adapter.detect(access(locked.url('std/repo'), { ...AUTH, password: 'nope' }))).toEqual({
      kind: 'needs_auth',
    });
    expect(await adapter.detect(access(open.url('missing/repo')))).toEqual({ kind: 'nothing' });
    expect(await adapter.detect(access('svn://127.0.0.1:9/repo'))).toEqual({ kind: 'nothing' });
    expect(await adapter.detect(access('http://127.0.0.1:9/repo'))).toEqual({ kind: 'nothing' });
  }, 20_000);

  it('is what detection over every adapter finds at an svn:// URL', async () => {
    expect(await detectOrigin(access(open.url('std/repo')), detectionCandidates())).toEqual({
      kind: 'found',
      vcs: 'subversion',
    });
  }, 20_000);
});

describe('Subversion raw import', () => {
  let onePass: RawJob;

  beforeAll(async () => {
    onePass = await job(open.url('std/repo'));
    await importAll(subversionAdapter(), onePass, 600_000);
  }, 30_000);

  it('makes main, the branches and annotated tags, with svn:ignore, svn:executable and the merge', async () => {
    const repo = rawRepositoryPath(onePass.workDir);
    expect((await git(repo, 'symbolic-ref', 'HEAD')).trim()).toBe('refs/heads/main');
    const listed = (await refs(repo)).trim().split('\n');
    expect(listed.map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual([
      'refs/heads/feature commit',
      'refs/heads/main commit',
      'refs/tags/v1.0 tag',
    ]);
    expect(await git(repo, 'show', 'main:.gitignore')).toBe('/*.log\n');
    expect(await git(repo, 'ls-tree', 'main', 'run.sh')).toMatch(/^100755 blob/);
    expect(await git(repo, 'show', 'main:README')).toBe('Project root\ntrunk change\n');
    expect(await git(repo, 'show', 'v1.0:README')).toBe('Project root\ntrunk change\n');
    expect(await git(repo, 'show', 'feature:feature.txt')).toBe('feature\n');
    expect((await git(repo, 'cat-file', '-s', 'main:big.bin')).trim()).toBe('4096');
    // svn-all-fast-export makes the revision that took the branch's files a two-parent merge.
    const merge = (await git(repo, 'log', '--merges', '--format=%P|%s', 'main')).trim().split('\n');
    expect(merge).toHaveLength(1);
    expect(merge[0]?.split('|')[1]).toBe('Merge feature');
    expect(merge[0]?.split('|')[0]?.split(' ')).toHaveLength(2);
    // Every revision that changed trunk or the branch is a commit; the copies that make the branch
    // and the tag are not (the branch starts at its source commit, the tag object names it).
    expect(Number((await git(repo, 'rev-list', '--all', '--count')).trim())).toBe(std.youngest - 2);
  });

  it('names every author user <user@uuid> and lists them as authors', async () => {
    const repo = rawRepositoryPath(onePass.workDir);
    const identities = new Set(
      (await git(repo, 'log', '--all', '--format=%an <%ae>|%cn <%ce>')).trim().split(/\n|\|/),
    );
    expect([...identities].sort()).toEqual(
      ['ada', 'bob', 'carl'].map((user) => `${user} <${user}@${std.uuid}>`),
    );
    const authors = await subversionAdapter().authors(onePass);
    expect([...authors].sort((a, b) => a.name.localeCompare(b.name))).toEqual(
      ['ada', 'bob', 'carl'].map((user) => ({
        remoteId: `${user} <${user}@${std.uuid}>`,
        remoteName: user,
        name: user,
        email: `${user}@${std.uuid}`,
      })),
    );
  });

  it('gives the same history in many small chunks as in one pass', async () => {
    const adapter = subversionAdapter({ svnPlan: { firstRevs: 2, growth: 1, minStepTimeoutMs: 60_000 } });
    const raw = await job(open.url('std/repo'));
    expect(await adapter.authors(raw)).toEqual([]);
    const { last, chunks, percents } = await importAll(adapter, raw, 1);
    // One step per chunk: five ranges of two revisions loaded (0–1 … 8), then four conversions
    // (r1–2, r3–4, r5–6, r7–8) resumed by svn-all-fast-export.
    expect(chunks).toBe(9);
    expect(last).toEqual({ done: true, commitCount: std.youngest - 2, percent: 100 });
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(await refs(rawRepositoryPath(raw.workDir))).toBe(await refs(rawRepositoryPath(onePass.workDir)));
    const state = JSON.parse(await readFile(join(raw.workDir, 'raw-svn-state.json'), 'utf8'));
    expect(state.origin.uuid).toBe(std.uuid);
  }, 30_000);

  it('imports only the chosen project of a root with several', async () => {
    const raw = await job(open.url('multi/repo'), {
      choice: { vcs: 'subversion', humanName: 'projB', path: 'projB' },
    });
    expect((await importAll(subversionAdapter(), raw, 600_000)).last.done).toBe(true);
    const repo = rawRepositoryPath(raw.workDir);
    expect((await refs(repo)).split('\n').filter(Boolean)).toHaveLength(3);
    expect(await git(repo, 'show', 'main:README')).toBe('Project projB\ntrunk change\n');
    expect(await git(repo, 'log', '--all', '--format=%s')).not.toMatch(/projA/);
    expect((await git(repo, 'ls-tree', '-r', '--name-only', 'main')).trim().split('\n').sort()).toEqual([
      '.gitignore',
      'README',
      'feature.txt',
      'run.sh',
    ]);
    expect(multi.uuid).toMatch(/^[0-9a-f-]{36}$/);
  }, 30_000);

  it('brings every branch and tag under its own valid ref, the renames recorded, in chunks as in one pass', async () => {
    const raw = await job(open.url('odd/repo'));
    expect((await importAll(subversionAdapter(), raw, 600_000)).last.done).toBe(true);
    const repo = rawRepositoryPath(raw.workDir);
    const names = (await git(repo, 'for-each-ref', '--format=%(refname)')).trim().split('\n');
    for (const name of names) await git(repo, 'check-ref-format', name);
    const renames = ((await loadFindings(raw.workDir)).renamed_refs?.listed ?? []).map((entry) => ({
      kind: entry.kind,
      name: entry.origin_name,
      ref: entry.ref,
      reason: entry.reason,
    }));
    // Kept: trunk, feature, v1.0, main (as branches/main) and -x, which Git takes as a ref.
    expect(renames.map(({ kind, name, reason }) => [kind, name, reason])).toEqual([
      ['branch', '.hidden', 'invalid'],
      ['branch', 'a..b', 'invalid'],
      ['branch', 'my branch', 'invalid'],
      ['branch', 'å ö#1', 'invalid'],
      ['tag', 'rel.', 'invalid'],
      ['tag', 'v1.lock', 'invalid'],
      ['tag', 'x@{1}', 'invalid'],
    ]);
    expect(renames.map((rename) => rename.ref)).toEqual([
      expect.stringMatching(/^refs\/heads\/_hidden-[0-9a-f]{8}$/),
      expect.stringMatching(/^refs\/heads\/a\.b-[0-9a-f]{8}$/),
      expect.stringMatching(/^refs\/heads\/my_branch-[0-9a-f]{8}$/),
      expect.stringMatching(/^refs\/heads\/å_ö_1-[0-9a-f]{8}$/),
      expect.stringMatching(/^refs\/tags\/rel_-[0-9a-f]{8}$/),
      expect.stringMatching(/^refs\/tags\/v1_lock-[0-9a-f]{8}$/),
      expect.stringMatching(/^refs\/tags\/x@_1}-[0-9a-f]{8}$/),
    ]);
    expect(names.sort()).toEqual(
      [
        'refs/heads/main',
        'refs/heads/feature',
        'refs/heads/branches/main',
        'refs/heads/-x',
        'refs/tags/v1.0',
        ...renames.map((rename) => rename.ref),
      ].sort(),
    );
    // The renamed branch holds what Subversion has on it.
    const mine = String(renames.find((rename) => rename.name === 'my branch')?.ref ?? '');
    expect(await git(repo, 'show', `${mine}:README`)).toBe('changed on my branch\n');
    const exported = join(await mkdtemp(join(work, 'export-')), 'tree');
    await exec('svn', ['export', '-q', `${open.url('odd/repo')}/branches/my branch`, exported], {
      env: { PATH: process.env.PATH, HOME: work },
    });
    const tree = (await git(repo, 'ls-tree', '-r', '--name-only', mine)).trim().split('\n').sort();
    expect(tree.filter((path) => path !== '.gitignore')).toEqual((await readdir(exported)).sort());
    for (const path of tree.filter((path) => path !== '.gitignore'))
      expect(await git(repo, 'show', `${mine}:${path}`)).toBe(await readFile(join(exported, path), 'utf8'));

    // In small chunks: the same refs, the same renames.
    const chunked = await job(open.url('odd/repo'));
    const adapter = subversionAdapter({ svnPlan: { firstRevs: 8, growth: 1, minStepTimeoutMs: 60_000 } });
    expect((await importAll(adapter, chunked, 1)).chunks).toBeGreaterThan(2);
    expect(await refs(rawRepositoryPath(chunked.workDir))).toBe(await refs(repo));
    expect((await loadFindings(chunked.workDir)).renamed_refs).toEqual(
      (await loadFindings(raw.workDir)).renamed_refs,
    );
  }, 40_000);

  it('fails readably when the mirror is over the size limit', async () => {
    const adapter = subversionAdapter({ maxBytes: 2048 });
    await expect(
      adapter.importRawChunk(await job(open.url('std/repo')), 600_000, () => undefined),
    ).rejects.toThrow(/larger than the import limit/);
  }, 20_000);
});

describe('Subversion credentials', () => {
  it('imports with the right password, refuses a wrong one without showing it', async () => {
    const adapter = subversionAdapter();
    const good = await job(locked.url('std/repo'), { credentials: AUTH });
    expect((await importAll(adapter, good, 600_000)).last.done).toBe(true);
    // Nothing the import leaves behind (mirror, raw.git, home, svn's config) holds the password.
    for (const entry of await readdir(good.workDir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const text = await readFile(join(entry.parentPath, entry.name), 'latin1');
      expect(text.includes(AUTH.password), join(entry.parentPath, entry.name)).toBe(false);
    }
    const wrong = { ...AUTH, password: 'pw-Wrong77-never-shown' };
    const error = await adapter
      .importRawChunk(await job(locked.url('std/repo'), { credentials: wrong }), 600_000, () => undefined)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OriginAuthFailed);
    expect(String((error as Error).message)).not.toContain(wrong.password);
    expect((error as Error).message).toBe('The origin refused the username and password');
    await expect(
      adapter.importRawChunk(await job(locked.url('std/repo')), 600_000, () => undefined),
    ).rejects.toThrow(OriginAuthFailed);
  }, 30_000);

  it('reports a missing repository and an unreachable origin readably', async () => {
    const adapter = subversionAdapter();
    await expect(
      adapter.importRawChunk(await job(open.url('missing/repo')), 600_000, () => undefined),
    ).rejects.toThrow(/^No Subversion repository was found at svn:\/\/127\.0\.0\.1:\d+\/missing\/repo$/);
    await expect(
      adapter.importRawChunk(await job('svn://127.0.0.1:9/repo'), 600_000, () => undefined),
    ).rejects.toThrow('The origin 127.0.0.1:9 could not be reached');
  }, 20_000);
});

describe('Subversion and the network guard', () => {
  const { resolve, dial, dialled } = stubNetwork({
    'svn.example': ['127.0.0.1'],
    'private.example': ['10.0.0.1'],
  });

  it('svn reaches an svn:// origin only through the guard (a name only the stub resolver knows)', async () => {
    const adapter = subversionAdapter({ resolve, dial });
    const url = `svn://svn.example:${open.port}/std/repo`;
    expect(await adapter.detect(access(url))).toEqual({ kind: 'found', vcs: 'subversion' });
    const raw = await job(url);
    expect((await importAll(adapter, raw, 600_000)).last).toEqual({
      done: true,
      commitCount: std.youngest - 2,
      percent: 100,
    });
    expect(dialled.some((target) => target.host === 'svn.example')).toBe(true);
    expect(dialled.every((target) => target.address === '127.0.0.1')).toBe(true);
  }, 30_000);

  it('refuses a forbidden address before any packet, in detection and import', async () => {
    const adapter = subversionAdapter({ resolve, dial });
    const before = dialled.length;
    await expect(adapter.detect(access('svn://private.example/repo'))).rejects.toThrow(ForbiddenAddress);
    await expect(adapter.detect(access('http://private.example/repo'))).rejects.toThrow(ForbiddenAddress);
    await expect(
      adapter.importRawChunk(await job('svn://private.example/repo'), 600_000, () => undefined),
    ).rejects.toThrow(ForbiddenAddress);
    await expect(
      adapter.importRawChunk(await job('http://private.example/svn/repo'), 600_000, () => undefined),
    ).rejects.toThrow(ForbiddenAddress);
    await expect(adapter.detect(access('svn://10.1.2.3/repo'))).rejects.toThrow(ForbiddenAddress);
    expect(dialled.slice(before)).toEqual([]);
  }, 30_000);

  it('refuses svn+ssh:// (ssh cannot go through the guard)', async () => {
    const adapter = subversionAdapter({ resolve, dial });
    const before = dialled.length;
    await expect(adapter.detect(access('svn+ssh://svn.example/repo'))).rejects.toThrow(
      new OriginFailed('vcs_url must use http, https, svn'),
    );
    const error = await adapter
      .importRawChunk(await job('svn+ssh://svn.example/repo'), 600_000, () => undefined)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OriginFailed);
    expect(error).not.toBeInstanceOf(ForbiddenAddress);
    expect(dialled.slice(before)).toEqual([]);
  });
});
