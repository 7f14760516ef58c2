/**
 * `npm run bench -- svn-100k` (opt-in): a generated Subversion history of 100,000 revisions
 * (`BENCH_SVN_REVISIONS` to measure a shorter one) imported through the service with a dead worker
 * in the middle, against the floor: `svnadmin load` of the same dump plus `svn-all-fast-export`
 * run by hand with the service's generic rules; then a sync of 10 new revisions against an
 * uninterrupted import of the same origin. The dump is written directly (`svn-dump.ts`) and cached
 * under `.data/cache/bench/`. Memory: resident memory of this process and everything it started
 * (DynamoDB Local aside), sampled every second; disk: `du` of the floor's directory, or of the
 * service's work directories and hosted repositories.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { ENV } from '#shared/config';
import { type DeathRecord, stackWithDeath } from './dead-worker.ts';
import { type ImportClient, importClient } from './import-client.ts';
import { sample } from './process-sampler.ts';
import { type SvnHistoryOptions, writeSvnDump } from './svn-dump.ts';

const run = promisify(execFile);

export const BENCH_CACHE = fileURLToPath(new URL('../../.data/cache/bench/', import.meta.url));

export interface SvnLargeOptions extends SvnHistoryOptions {
  /** Revisions added at the origin before the sync. */
  readonly added: number;
  /** How long svn-all-fast-export runs before its worker dies. */
  readonly deathAfterMs: number;
}

export interface Cost {
  readonly ms: number;
  readonly peakRssBytes: number;
  readonly peakDiskBytes: number;
}

export interface SvnLargeResult extends LargeOutcome {
  readonly revisions: number;
  readonly dumpBytes: number;
  readonly generateMs: number | undefined;
  readonly floorLoad: Cost;
  readonly floorConvert: Cost;
}

/** The dump of `options`' history, written once and kept in the cache. */
async function cachedDump(options: SvnHistoryOptions): Promise<{ file: string; generateMs?: number }> {
  await mkdir(BENCH_CACHE, { recursive: true });
  const file = join(
    BENCH_CACHE,
    `svn-${options.revisions}r-${options.branches}b-${options.tags}t-${options.files}f-${options.authors.length}a.dump`,
  );
  if (
    await stat(file).then(
      () => true,
      () => false,
    )
  )
    return { file };
  const started = performance.now();
  await writeSvnDump(`${file}.part`, options);
  await run('mv', [`${file}.part`, file]);
  return { file, generateMs: performance.now() - started };
}

/** svn-all-fast-export's rules as the service writes them for plain branch and tag names. */
const RULES = `create repository floor.git
end repository

match /trunk/
  repository floor.git
  branch main
end match

match /branches/([^/ ~^:?*\\[\\\\.-][^/ ~^:?*\\[\\\\]*)/
  repository floor.git
  branch \\1
end match

match /tags/([^/ ~^:?*\\[\\\\.-][^/ ~^:?*\\[\\\\]*)/
  repository floor.git
  branch refs/tags/\\1
  annotated true
end match

match /
end match
`;

export async function measured(dirs: readonly string[], work: () => Promise<unknown>): Promise<Cost> {
  const sampler = sample(dirs);
  const started = performance.now();
  const outcome = await work().then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  const ms = performance.now() - started;
  const peaks = await sampler.stop();
  if (outcome !== undefined) throw outcome.error;
  return { ms, ...peaks };
}

export async function measureSvnLarge(options: SvnLargeOptions): Promise<SvnLargeResult> {
  process.env[ENV.importChunkSeconds] ??= '600';
  const loadBefore = loadavg()[0] ?? 0;
  const dump = await cachedDump(options);
  const work = await mkdtemp(join(tmpdir(), 'bench-svn-large-'));
  const env = { PATH: process.env.PATH, HOME: work, LC_ALL: 'C' };
  let origin: SvnServer | undefined;
  const bench = await stackWithDeath(
    'svn-large',
    {
      tool: 'svn-all-fast-ex',
      afterMs: options.deathAfterMs,
      within: () => process.env[ENV.importWorkDir] ?? '/',
    },
    work,
  );
  try {
    // The floor: the dump loaded, then converted by hand; the loaded repository is then the origin.
    const floor = join(work, 'floor');
    const repo = join(floor, 'origin');
    await mkdir(floor);
    const floorLoad = await measured([floor], async () => {
      await run('svnadmin', ['create', repo], { env });
      await run('svnadmin', ['load', '-q', '--no-flush-to-disk', '-F', dump.file, repo], {
        env,
        maxBuffer: 64 << 20,
      });
    });
    const uuid = (await run('svnlook', ['uuid', repo], { env })).stdout.trim();
    const revisions = Number((await run('svnlook', ['youngest', repo], { env })).stdout.trim());
    const convert = join(work, 'floor-convert');
    await mkdir(convert);
    await writeFile(join(convert, 'svn.rules'), RULES);
    const floorConvert = await measured([convert], () =>
      run(
        'svn-all-fast-export',
        [
          '--identity-domain',
          uuid,
          '--rules',
          'svn.rules',
          '--svn-ignore',
          '--stats',
          '--fast-import-timeout',
          '0',
          repo,
        ],
        { cwd: convert, env, maxBuffer: 1 << 30 },
      ),
    );
    await rm(convert, { recursive: true, force: true });

    origin = await serveSvn(floor);
    const url = origin.url('origin');
    const client = await importClient(bench.stack, bench.endpointsFile, work);
    const imports = await dyingAndClean(client, url, 'subversion');

    await client.follow('clean');
    const file = join(work, 'added.txt');
    for (let added = 1; added <= options.added; added++) {
      await writeFile(file, `r${revisions + added}\n`);
      await run(
        'svnmucc',
        [
          '-U',
          `file://${repo}`,
          '-m',
          `r${revisions + added}`,
          '--username',
          'ada',
          'put',
          file,
          'trunk/added.txt',
        ],
        { env },
      );
    }
    return {
      revisions,
      dumpBytes: (await stat(dump.file)).size,
      generateMs: dump.generateMs,
      floorLoad,
      floorConvert,
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

/** The import whose worker dies, then an uninterrupted import of the same origin, compared. */
export async function dyingAndClean(client: ImportClient, url: string, vcs: string) {
  const serviceDirs = [process.env[ENV.importWorkDir] ?? '', process.env[ENV.repositoriesDir] ?? ''];
  const importWithDeath = await measured(serviceDirs, () => client.imported('dying', url, vcs));
  const importClean = await measured(serviceDirs, () => client.imported('clean', url, vcs));
  const sameAfterDeath = (await client.refs('dying')) === (await client.refs('clean'));
  return { importWithDeath, importClean, sameAfterDeath };
}

/** What a large-history section measured besides its floor. */
export interface LargeOutcome {
  readonly importWithDeath: Cost;
  readonly death: DeathRecord;
  readonly retriesAdded: boolean;
  readonly importClean: Cost;
  readonly sameAfterDeath: boolean;
  readonly syncMs: number;
  readonly loadBefore: number;
  readonly loadAfter: number;
}

/** The rows of the imports and the sync, and the sentence on the death, of a large-history report. */
export function outcomeLines(result: LargeOutcome, where: string, added: string): string[] {
  const ratio = result.syncMs / result.importClean.ms;
  return [
    costRow(
      `import through the API, its worker killed once (${result.death.killed ? `${where}, in raw-step invocation ${result.death.invocation}` : '**no death happened**'})`,
      result.importWithDeath,
    ),
    costRow('import through the API, uninterrupted', result.importClean),
    `| sync of ${added} | ${seconds(result.syncMs)} (**${ratio.toFixed(3)}×** the import; target ≤ 0.2) | | |`,
    '',
    `The import whose worker died equals the uninterrupted one, refs id for id: **${result.sameAfterDeath ? 'yes' : 'NO'}**. ${result.retriesAdded ? "The ASL in this tree did not retry `Runtime.ExitError`: the bench ran a copy with it added to every Task's first Retry." : 'The ASL retries `Runtime.ExitError` as it is.'} Memory is this process (the local stack and its in-process worker) and every process it started, DynamoDB Local aside: the origin's server (a child too) is counted, in the floor as well when the floor reads it over the network (Git).`,
  ];
}

const seconds = (value: number) => `${(value / 1000).toFixed(1)} s`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
export const costRow = (label: string, cost: Cost) =>
  `| ${label} | ${seconds(cost.ms)} | ${mib(cost.peakRssBytes)} | ${mib(cost.peakDiskBytes)} |`;

export function svnLargeReport(result: SvnLargeResult, machine: string, options: SvnLargeOptions): string {
  const floorMs = result.floorLoad.ms + result.floorConvert.ms;
  return [
    `Measured ${machine}, load average ${result.loadBefore.toFixed(1)} before and ${result.loadAfter.toFixed(1)} after: a generated Subversion history of ${result.revisions.toLocaleString('en')} revisions (standard layout, ${options.branches} branches, ${options.tags} tags, ${options.authors.length} authors, ${options.files} files; a ${mib(result.dumpBytes)} dump${result.generateMs === undefined ? ' from the cache' : ` written in ${seconds(result.generateMs)}`}), served by \`svnserve\` on 127.0.0.1.`,
    '',
    '| | time | peak memory | peak disk |',
    '|---|---|---|---|',
    costRow('floor: `svnadmin load` of the dump', result.floorLoad),
    costRow("floor: `svn-all-fast-export` by hand (the service's rules)", result.floorConvert),
    `| floor, both | ${seconds(floorMs)} | | |`,
    ...outcomeLines(
      result,
      `svn-all-fast-export's process group, ${options.deathAfterMs / 1000} s into it`,
      `${options.added} new revisions`,
    ),
  ].join('\n');
}
