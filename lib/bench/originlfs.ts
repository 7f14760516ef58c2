import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { config } from '#shared/config';
import { prepareHome } from '#vcs/git-command';
import { hostedRepositoryPath, lfsObjectPath } from '#vcs/hosted-paths';
import { fetchOriginLfs } from '#vcs/origin-lfs';
import { median } from './measure.ts';
import { admin, BENCH_PASSWORD, basicAuth, startBenchStack } from './support.ts';

/*
 * Fetching a Git origin's LFS objects (issue 28): `fetchOriginLfs` (the batch API from Node,
 * through the network guard) against git-lfs's own `git lfs fetch --all`, on the same origin (this
 * service's Git front end and LFS server on 127.0.0.1) and the same objects, in alternating rounds,
 * each into an empty object directory.
 */

const run = promisify(execFile);

export interface OriginLfsOptions {
  readonly objects: number;
  readonly objectBytes: number;
  readonly rounds: number;
}

export interface OriginLfsResult {
  readonly totalBytes: number;
  readonly importerMs: readonly number[];
  readonly gitLfsMs: readonly number[];
}

export async function measureOriginLfs(options: OriginLfsOptions): Promise<OriginLfsResult> {
  const { stack, endpointsFile, stop } = await startBenchStack('originlfs');
  const work = await mkdtemp(join(tmpdir(), 'bench-originlfs-'));
  const env = { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
  const git = (args: string[], cwd: string) => run('git', args, { cwd, env, maxBuffer: 64 << 20 });
  try {
    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    const created = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: basicAuth('bench', BENCH_PASSWORD), 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'media' }),
    });
    if (created.status !== 201) throw new Error(`repository: ${created.status}`);
    // The origin's history and objects, written where the front end serves them from.
    const hosted = hostedRepositoryPath(config().repositoriesDir, 'bench', 'media');
    const source = join(work, 'source');
    await git(['init', '-q', '-b', 'main', source], work);
    for (let index = 0; index < options.objects; index++) {
      const content = randomBytes(options.objectBytes);
      const oid = createHash('sha256').update(content).digest('hex');
      await mkdir(join(lfsObjectPath(hosted, oid), '..'), { recursive: true });
      await writeFile(lfsObjectPath(hosted, oid), content);
      await writeFile(
        join(source, `f${index}.bin`),
        `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${content.length}\n`,
      );
    }
    await writeFile(join(source, '.gitattributes'), '*.bin filter=lfs diff=lfs merge=lfs -text\n');
    await git(['add', '.'], source);
    await git(['-c', 'user.name=B', '-c', 'user.email=b@example.com', 'commit', '-qm', 'objects'], source);
    // The hosted repository is made by its first push; here the bench writes it itself.
    await git(['init', '-q', '--bare', hosted], work);
    await git(['push', '-q', hosted, 'main'], source);
    const url = `${stack.webUrl}/bench/media.git`.replace('//localhost:', '//127.0.0.1:');
    const mirror = join(work, 'mirror.git');
    await git(['clone', '-q', '--mirror', url, mirror], work);
    const clone = join(work, 'clone');
    await git(
      ['-c', 'filter.lfs.smudge=', '-c', 'filter.lfs.required=false', 'clone', '-q', url, clone],
      work,
    );
    const home = join(work, 'home');
    await prepareHome(home, [mirror]);

    const importerMs: number[] = [];
    const gitLfsMs: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      await rm(join(mirror, 'lfs'), { recursive: true, force: true });
      await rm(join(work, 'cache'), { recursive: true, force: true });
      let started = performance.now();
      const result = await fetchOriginLfs(
        {
          access: { url },
          guard: { allowedAddresses: ['127.0.0.1', '::1'] },
          repoDir: mirror,
          workDir: work,
          maxBytes: 10 * 1024 ** 3,
          cacheDir: join(work, 'cache'),
        },
        { home, timeoutMs: 600_000 },
      );
      importerMs.push(performance.now() - started);
      if (result.fetched !== options.objects)
        throw new Error(`fetched ${result.fetched} of ${options.objects}`);
      await rm(join(clone, '.git', 'lfs'), { recursive: true, force: true });
      started = performance.now();
      await git(['lfs', 'fetch', '--all', 'origin'], clone);
      gitLfsMs.push(performance.now() - started);
    }
    return { totalBytes: options.objects * options.objectBytes, importerMs, gitLfsMs };
  } finally {
    await stop();
    await rm(work, { recursive: true, force: true });
  }
}

export function originLfsReport(result: OriginLfsResult, machine: string, options: OriginLfsOptions): string {
  const ratios = result.importerMs.map(
    (importer, index) => importer / (result.gitLfsMs[index] ?? Number.NaN),
  );
  const seconds = (values: readonly number[]) => `${(median(values) / 1000).toFixed(2)} s`;
  return [
    `Fetching a Git origin's LFS objects (${machine}): ${options.objects} objects of ${(options.objectBytes / 1024).toFixed(0)} KiB (${(result.totalBytes / 1024 ** 2).toFixed(0)} MiB) from this service's Git front end on 127.0.0.1, ${options.rounds} alternating rounds, each into an empty object directory.`,
    '',
    '| | median | rounds |',
    '|---|---|---|',
    `| importer (\`fetchOriginLfs\`: batch API from Node through the network guard, 8 downloads at a time) | ${seconds(result.importerMs)} | ${result.importerMs.map((value) => (value / 1000).toFixed(2)).join(', ')} s |`,
    `| \`git lfs fetch --all\` | ${seconds(result.gitLfsMs)} | ${result.gitLfsMs.map((value) => (value / 1000).toFixed(2)).join(', ')} s |`,
    `| ratio (importer / git-lfs, per round) | ${median(ratios).toFixed(2)} | ${ratios.map((value) => value.toFixed(2)).join(', ')} |`,
  ].join('\n');
}
