/**
 * `npm run bench -- git-large` (opt-in): the largest Git history this machine holds within reason
 * (`BENCH_GIT_GIB`, default 5 GiB of incompressible blobs over many commits, written by
 * `git fast-import` and cached under `.data/cache/bench/`) imported through the service from a
 * smart-HTTP origin with a dead worker in the middle of its fetch, against the floor
 * `git clone --mirror` plus `git push --mirror` of the same origin; then a sync of 10 new commits
 * against an uninterrupted import. Memory and disk are sampled as in `svn-large.ts`.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ENV } from '#shared/config';
import { stackWithDeath } from './dead-worker.ts';
import { importClient } from './import-client.ts';
import { diskBytes } from './process-sampler.ts';
import { serveGitHttpApart } from './support.ts';
import {
  BENCH_CACHE,
  type Cost,
  costRow,
  dyingAndClean,
  type LargeOutcome,
  measured,
  outcomeLines,
} from './svn-large.ts';

const run = promisify(execFile);

export interface GitLargeOptions {
  readonly bytes: number;
  readonly commits: number;
  readonly added: number;
  readonly deathAfterMs: number;
}

export interface GitLargeResult extends LargeOutcome {
  readonly objectBytes: number;
  readonly commits: number;
  readonly generateMs: number | undefined;
  readonly floor: Cost;
}

const gitEnv = (home: string) => ({
  PATH: process.env.PATH,
  HOME: home,
  LC_ALL: 'C',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
});

/**
 * A bare repository of `commits` commits on `main` (a branch every 500 commits, a tag every 1,000),
 * each writing one random file of `bytes / commits` bytes among 500 paths (so files change) and a
 * line of text: written once by `git fast-import` and kept in the cache.
 */
async function cachedHistory(options: GitLargeOptions): Promise<{ repo: string; generateMs?: number }> {
  await mkdir(BENCH_CACHE, { recursive: true });
  const repo = join(BENCH_CACHE, `git-${options.bytes}b-${options.commits}c.git`);
  if (
    await stat(join(repo, 'done')).then(
      () => true,
      () => false,
    )
  )
    return { repo };
  const started = performance.now();
  await rm(repo, { recursive: true, force: true });
  const env = gitEnv(BENCH_CACHE);
  await run('git', ['init', '-q', '--bare', '-b', 'main', repo], { env });
  const importer = spawn('git', ['fast-import', '--quiet', '--done'], {
    cwd: repo,
    env,
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  const write = async (chunk: string | Buffer) => {
    if (!importer.stdin.write(chunk)) await once(importer.stdin, 'drain');
  };
  const size = Math.max(1, Math.floor(options.bytes / options.commits));
  for (let i = 1; i <= options.commits; i++) {
    const blob = randomBytes(size);
    const message = `Commit ${i}\n`;
    await write(
      `commit refs/heads/main\nmark :${i}\ncommitter Dev ${i % 300} <dev${i % 300}@example.com> ${1_500_000_000 + i * 60} +0000\ndata ${Buffer.byteLength(message)}\n${message}`,
    );
    if (i > 1) await write(`from :${i - 1}\n`);
    await write(`M 100644 inline data/${i % 500}.bin\ndata ${blob.length}\n`);
    await write(blob);
    const line = `commit ${i}\n`;
    await write(`\nM 100644 inline log.txt\ndata ${line.length}\n${line}\n`);
    if (i % 500 === 0) await write(`reset refs/heads/branch-${i}\nfrom :${i}\n\n`);
    if (i % 1000 === 0) {
      const tag = `v${i}\n`;
      await write(
        `tag v${i}\nfrom :${i}\ntagger Dev <dev@example.com> ${1_500_000_000 + i * 60} +0000\ndata ${tag.length}\n${tag}\n`,
      );
    }
  }
  await write('done\n');
  importer.stdin.end();
  const [code] = (await once(importer, 'close')) as [number | null];
  if (code !== 0) throw new Error(`git fast-import exited with ${code}`);
  await writeFile(join(repo, 'done'), '');
  return { repo, generateMs: performance.now() - started };
}

export async function measureGitLarge(options: GitLargeOptions): Promise<GitLargeResult> {
  process.env[ENV.importChunkSeconds] ??= '600';
  const loadBefore = loadavg()[0] ?? 0;
  const history = await cachedHistory(options);
  const work = await mkdtemp(join(tmpdir(), 'bench-git-large-'));
  const env = gitEnv(work);
  const git = (args: string[], cwd = work) => run('git', args, { cwd, env, maxBuffer: 256 << 20 });
  const bench = await stackWithDeath(
    'git-large',
    { tool: 'git', afterMs: options.deathAfterMs, within: () => process.env[ENV.importWorkDir] ?? '/' },
    work,
  );
  let origin: Awaited<ReturnType<typeof serveGitHttpApart>> | undefined;
  try {
    // The origin: a copy of the cached history (a sync adds commits to it).
    const origins = join(work, 'origins');
    await mkdir(origins);
    const originRepo = join(origins, 'large.git');
    await git(['clone', '-q', '--bare', '--no-local', history.repo, originRepo]);
    origin = await serveGitHttpApart(origins);
    const url = `${origin.url}/large.git`;
    const objectBytes = await diskBytes([join(originRepo, 'objects')]);
    const commits = Number(
      (await git(['--git-dir', originRepo, 'rev-list', '--all', '--count'])).stdout.trim(),
    );

    const floorDir = join(work, 'floor');
    await mkdir(floorDir);
    const floor = await measured([floorDir], async () => {
      await git(['clone', '-q', '--mirror', url, join(floorDir, 'mirror.git')]);
      await git(['init', '-q', '--bare', join(floorDir, 'target.git')]);
      await git(['push', '-q', '--mirror', join(floorDir, 'target.git')], join(floorDir, 'mirror.git'));
    });
    await rm(floorDir, { recursive: true, force: true });

    const client = await importClient(bench.stack, bench.endpointsFile, work);
    const imports = await dyingAndClean(client, url, 'git');

    await client.follow('clean');
    const clone = join(work, 'clone');
    await git(['clone', '-q', '--no-checkout', '--depth', '1', `file://${originRepo}`, clone]);
    for (let i = 1; i <= options.added; i++) {
      await writeFile(join(clone, 'added.txt'), `added ${i}\n`);
      await git(['add', 'added.txt'], clone);
      await git(
        ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', 'commit', '-q', '-m', `Added ${i}`],
        clone,
      );
    }
    await git(['push', '-q', 'origin', 'HEAD:main'], clone);
    return {
      objectBytes,
      commits,
      generateMs: history.generateMs,
      floor,
      ...imports,
      death: bench.record,
      retriesAdded: bench.retriesAdded,
      syncMs: await client.synced('clean'),
      loadBefore,
      loadAfter: loadavg()[0] ?? 0,
    };
  } finally {
    await origin?.close();
    await bench.stop();
    await rm(work, { recursive: true, force: true });
  }
}

export function gitLargeReport(result: GitLargeResult, machine: string, options: GitLargeOptions): string {
  const seconds = (value: number) => `${(value / 1000).toFixed(1)} s`;
  return [
    `Measured ${machine}, load average ${result.loadBefore.toFixed(1)} before and ${result.loadAfter.toFixed(1)} after: a generated Git history of ${result.commits.toLocaleString('en')} commits and ${(result.objectBytes / 2 ** 30).toFixed(2)} GiB of objects (random, incompressible blobs; ${result.generateMs === undefined ? 'from the cache' : `written by \`git fast-import\` in ${seconds(result.generateMs)}`}), served over smart HTTP on 127.0.0.1.`,
    '',
    '| | time | peak memory | peak disk |',
    '|---|---|---|---|',
    costRow('floor: `git clone --mirror` + `git push --mirror`', result.floor),
    ...outcomeLines(
      result,
      `a git process group ${options.deathAfterMs / 1000} s into it`,
      `${options.added} new commits`,
    ),
  ].join('\n');
}
