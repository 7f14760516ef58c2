/**
 * `npm run bench -- concurrent` (opt-in): many imports at once through the running local service
 * (the API, the ASL file on the local Step Functions endpoint, the task handlers in this process,
 * git, svn, hg and the TFVC stand-in on 127.0.0.1). Level 1 runs one import of each kind in turn;
 * the next levels start that many imports together, the kinds in turn (Git, Subversion,
 * Mercurial, TFVC), each from an origin copy of its own. Per level: the wall time from the first
 * start to the last `complete`, the commits imported (`commit_count`) per second, imports per
 * hour, the peak memory of this process's tree (the sum of the RSS of the stack and every tool it
 * runs) and the peak size of the work directory (import working directories and hosted
 * repositories), with the machine's load average beside them.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { makeFixtureRepository } from '#local/git-fixtures';
import { serveGitHttp } from '#local/git-origins';
import { makeHgBulkRepository, serveHg } from '#local/hg-origins';
import { serveSvn } from '#local/svn-origins';
import { TFVC_USERS } from '#local/tfvc-alpha';
import { serveTfvc, type TfvcChangesetSpec, type TfvcProjectSpec } from '#local/tfvc-origin';
import { ENV } from '#shared/config';
import { admin, BENCH_PASSWORD, basicAuth, startBenchStack } from './support.ts';
import { makeSvnHistory } from './svn-dump.ts';

const run = promisify(execFile);

export interface ConcurrentBenchOptions {
  /** How many imports start together at each level (1 runs one of each kind in turn). */
  readonly levels: readonly number[];
  readonly gitCommits: number;
  readonly svnRevisions: number;
  readonly hgRevisions: number;
  readonly tfvcChangesets: number;
}

type Kind = 'git' | 'svn' | 'hg' | 'tfvc';
const KINDS: readonly Kind[] = ['git', 'svn', 'hg', 'tfvc'];

export interface LevelResult {
  readonly level: number;
  readonly imports: number;
  readonly wallMs: number;
  readonly commits: number;
  readonly peakRssBytes: number;
  readonly peakDiskBytes: number;
  /** The 1-minute load average before the level and after it. */
  readonly load: readonly [number, number];
}

export interface ConcurrentBenchResult {
  readonly levels: readonly LevelResult[];
  readonly commitsPerKind: Readonly<Record<Kind, number>>;
}

/** RSS of this process and all its descendants, from /proc. */
async function treeRssBytes(): Promise<number> {
  const parents = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    parents.set(Number(entry), Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0));
    rss.set(Number(entry), Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0) * 1024);
  }
  let total = 0;
  for (const [pid, bytes] of rss) {
    let at: number | undefined = pid;
    while (at !== undefined && at > 1 && at !== process.pid) at = parents.get(at);
    if (at === process.pid) total += bytes;
  }
  return total;
}

async function diskBytes(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-sb', dir]).catch(() => ({ stdout: '0' }));
  return Number(stdout.split('\t')[0] ?? 0);
}

/** Samples `sample` until `action` ends; the largest value seen. */
async function peakDuring(
  sample: () => Promise<number>,
  intervalMs: number,
  action: Promise<unknown>,
): Promise<number> {
  let peak = 0;
  let done = false;
  void action.finally(() => {
    done = true;
  });
  while (!done) {
    peak = Math.max(peak, await sample());
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return Math.max(peak, await sample());
}

/** Changeset 1 makes `src`; each later one adds or edits one of 100 files. */
function tfvcProject(count: number): TfvcProjectSpec {
  const { ada, bob } = TFVC_USERS;
  const changesets: TfvcChangesetSpec[] = [];
  for (let id = 1; id <= count; id++)
    changesets.push({
      id,
      author: id % 3 === 0 ? bob : ada,
      date: new Date(Date.UTC(2020, 0, 1) + id * 60_000).toISOString(),
      comment: `Changeset number ${id}`,
      changes:
        id === 1
          ? [{ path: 'src', changeType: 'add', folder: true }]
          : [
              {
                path: `src/file-${id % 100}.txt`,
                changeType: id - 1 <= 100 ? 'add, edit, encoding' : 'edit',
                content: `written by changeset ${id}\n`.repeat(20),
              },
            ],
    });
  return { name: 'Bulk', changesets };
}

export async function measureConcurrent(options: ConcurrentBenchOptions): Promise<ConcurrentBenchResult> {
  process.env[ENV.importChunkSeconds] ??= '600';
  const { stack, endpointsFile, stop } = await startBenchStack('concurrent');
  const work = await mkdtemp(join(tmpdir(), 'bench-concurrent-'));
  const closers: (() => Promise<void>)[] = [];
  try {
    const copies = Math.ceil(Math.max(...options.levels) / KINDS.length);
    const indexes = Array.from({ length: copies }, (_, i) => i);
    // One history per kind, copied: each import reads an origin of its own.
    const gitRoot = join(work, 'git');
    const svnRoot = join(work, 'svn');
    await makeFixtureRepository(join(gitRoot, 'git-0.git'), {
      commits: options.gitCommits,
      branches: 4,
      annotatedTags: 10,
      bytesPerCommit: 2_000,
    });
    await mkdir(svnRoot, { recursive: true });
    await makeSvnHistory(svnRoot, 'svn-0', {
      revisions: options.svnRevisions,
      branches: 4,
      tags: 10,
      files: 120,
      authors: ['ada', 'bob', 'carl', 'dora', 'emil'],
    });
    await makeHgBulkRepository(join(work, 'hg', 'hg-0'), {
      revisions: options.hgRevisions,
      branchRevisions: Math.floor(options.hgRevisions / 4),
    });
    for (const i of indexes.slice(1)) {
      await cp(join(gitRoot, 'git-0.git'), join(gitRoot, `git-${i}.git`), { recursive: true });
      await cp(join(svnRoot, 'svn-0'), join(svnRoot, `svn-${i}`), { recursive: true });
      await cp(join(work, 'hg', 'hg-0'), join(work, 'hg', `hg-${i}`), { recursive: true });
    }
    const gitOrigin = await serveGitHttp(gitRoot);
    closers.push(() => gitOrigin.close());
    const svnOrigin = await serveSvn(svnRoot);
    closers.push(() => svnOrigin.close());
    const hgOrigins = await Promise.all(indexes.map((i) => serveHg({ repo: join(work, 'hg', `hg-${i}`) })));
    for (const origin of hgOrigins) closers.push(() => origin.close());
    const project = tfvcProject(options.tfvcChangesets);
    const tfvcOrigins = await Promise.all(indexes.map(() => serveTfvc({ projects: [project] })));
    for (const origin of tfvcOrigins) closers.push(() => origin.close());
    const requestOf = (kind: Kind, copy: number): Record<string, unknown> => {
      if (kind === 'git') return { vcs_url: `${gitOrigin.url}/git-${copy}.git` };
      if (kind === 'svn') return { vcs_url: svnOrigin.url(`svn-${copy}`) };
      if (kind === 'hg') return { vcs_url: hgOrigins[copy]?.url };
      return { vcs_url: tfvcOrigins[copy]?.collectionUrl, vcs: 'tfvc', tfvc_project: 'Bulk' };
    };

    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    const created = await fetch(`${stack.baseUrl}/authorizations`, {
      method: 'POST',
      headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
      body: JSON.stringify({ scopes: ['repo'], note: 'concurrent imports benchmark' }),
    });
    const { token } = (await created.json()) as { token: string };
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${stack.baseUrl}${path}`, {
        method,
        headers: { Authorization: `token ${token}`, Accept: 'application/vnd.github.barred-rock-preview' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>;
    };
    /** One import from start to `complete`; its `commit_count`. */
    const importOne = async (repo: string, request: Record<string, unknown>): Promise<number> => {
      await call('POST', '/user/repos', { name: repo });
      const started = await call('PUT', `/repos/bench/${repo}/import`, request);
      if (started.status === undefined) throw new Error(`${repo}: ${JSON.stringify(started)}`);
      for (;;) {
        const body = await call('GET', `/repos/bench/${repo}/import`);
        if (body.status === 'complete') {
          // The commits the hosted repository holds (the progress body drops `commit_count` at the end).
          const hosted = join(process.env[ENV.repositoriesDir] ?? '', 'bench', `${repo}.git`);
          const { stdout } = await run('git', ['-C', hosted, 'rev-list', '--all', '--count']);
          return Number(stdout.trim());
        }
        if (body.status === 'error' || String(body.status).endsWith('_failed'))
          throw new Error(`${repo}: ${JSON.stringify(body)}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };

    // The stack's state directory: import work folders and hosted repositories beside each other.
    const stateDir = dirname(process.env[ENV.importWorkDir] ?? work);
    const commitsPerKind = { git: 0, svn: 0, hg: 0, tfvc: 0 };
    const levels: LevelResult[] = [];
    for (const level of options.levels) {
      const before = loadavg()[0] ?? 0;
      const begun = performance.now();
      const imports =
        level === 1
          ? (async () => {
              const counts: number[] = [];
              for (const kind of KINDS) counts.push(await importOne(`l1-${kind}`, requestOf(kind, 0)));
              return counts;
            })()
          : Promise.all(
              Array.from({ length: level }, (_, i) => {
                const kind = KINDS[i % KINDS.length] ?? 'git';
                return importOne(`l${level}-${i}-${kind}`, requestOf(kind, Math.floor(i / KINDS.length)));
              }),
            );
      const [peakRssBytes, peakDiskBytes, counts] = await Promise.all([
        peakDuring(treeRssBytes, 250, imports),
        peakDuring(() => diskBytes(stateDir), 2_000, imports),
        imports,
      ]);
      const wallMs = performance.now() - begun;
      if (level === 1) {
        for (const [i, kind] of KINDS.entries()) commitsPerKind[kind] = counts[i] ?? 0;
      }
      levels.push({
        level,
        imports: counts.length,
        wallMs,
        commits: counts.reduce((sum, count) => sum + count, 0),
        peakRssBytes,
        peakDiskBytes,
        load: [before, loadavg()[0] ?? 0],
      });
      console.error(`level ${level}: ${JSON.stringify(levels.at(-1))}`);
      // Each level starts from the same disk: the hosted repositories of the last one go.
      await rm(join(stateDir, 'repositories'), { recursive: true, force: true });
      await rm(join(stateDir, 'imports'), { recursive: true, force: true });
    }
    return { levels, commitsPerKind };
  } finally {
    for (const close of closers) await close().catch(() => undefined);
    await stop();
    await rm(work, { recursive: true, force: true });
  }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

export function concurrentReport(
  result: ConcurrentBenchResult,
  machine: string,
  options: ConcurrentBenchOptions,
): string {
  const [first] = result.levels;
  const perSecond = (level: LevelResult) => level.commits / (level.wallMs / 1000);
  const perHour = (level: LevelResult) => (level.imports * 3_600_000) / level.wallMs;
  return [
    `Measured ${machine}: imports through the local stack in one process (the task handlers in process, every tool a child of it), histories of ${options.gitCommits} Git commits (${result.commitsPerKind.git} imported), ${options.svnRevisions} Subversion revisions (${result.commitsPerKind.svn} commits), ${options.hgRevisions} Mercurial changesets (${result.commitsPerKind.hg}) and ${options.tfvcChangesets} TFVC changesets (${result.commitsPerKind.tfvc}). Level 1: one import of each kind in turn; level n: n imports started together, the kinds in turn, each from its own copy of the origin. Memory: the largest sum of the RSS of this process and its descendants (a page shared by two processes counts twice); disk: the largest size of the work directory (import folders and hosted repositories), emptied between levels.`,
    '',
    '| Imports at once | Imports | Wall time | Commits | Commits/s | Imports/hour | Peak memory | Peak disk | Load (1 min) before → after |',
    '|---|---|---|---|---|---|---|---|---|',
    ...result.levels.map(
      (level) =>
        `| ${level.level} | ${level.imports} | ${(level.wallMs / 1000).toFixed(1)} s | ${level.commits} | ${perSecond(level).toFixed(1)} | ${perHour(level).toFixed(0)} | ${mib(level.peakRssBytes)} | ${mib(level.peakDiskBytes)} | ${level.load[0].toFixed(1)} → ${level.load[1].toFixed(1)} |`,
    ),
    '',
    ...(first
      ? [
          `Growth against level 1: ${result.levels
            .slice(1)
            .map(
              (level) =>
                `${level.level} at once: throughput ×${(perSecond(level) / perSecond(first)).toFixed(2)}, memory ×${(level.peakRssBytes / first.peakRssBytes).toFixed(2)}, disk ×${(level.peakDiskBytes / first.peakDiskBytes).toFixed(2)}`,
            )
            .join('; ')}.`,
        ]
      : []),
  ].join('\n');
}
