/**
 * `npm run bench -- import`: source imports through the running local service (the API, the very
 * ASL file on the local Step Functions endpoint, the task handlers in process, git), next to the
 * floor a person gets with git alone in the same run: `git clone --mirror` from the origin and
 * `git push --mirror` into an empty repository, both over smart HTTP on 127.0.0.1. Two origins: a
 * generated history, and a real one (Lua's, `test/fixtures/git`, or `BENCH_REAL_BUNDLE`) imported
 * and copied in alternation, run after run, so that a busy machine slows both alike.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { makeFixtureRepository } from '#local/git-fixtures';
import { serveGitHttp } from '#local/git-origins';
import { ENV } from '#shared/config';
import { clientPhases, type Round, type Spread, stateTimes, summarizeRounds } from './import-rounds.ts';
import { median } from './measure.ts';
import {
  admin,
  BENCH_PASSWORD,
  basicAuth,
  executionHistory,
  serveGitHttpApart,
  startBenchStack,
  stateDurations,
} from './support.ts';

const run = promisify(execFile);

export interface ImportBenchOptions {
  readonly commits: number;
  readonly bytesPerCommit: number;
  readonly branches: number;
  readonly tags: number;
  /** Imports of the one-commit repository (fixed overhead). */
  readonly smallRuns: number;
  /** Imports of the real history, each after its floor. */
  readonly realRuns: number;
  /** How often the client polls `GET …/import` for `complete` in the real history's rounds. */
  readonly pollMs: number;
}

/** The real history: a bundle of its branches and tags. */
export const REAL_HISTORY_BUNDLE =
  process.env.BENCH_REAL_BUNDLE ??
  fileURLToPath(new URL('../../test/fixtures/git/lua-5.2.0.bundle', import.meta.url));

export interface RealHistoryResult {
  readonly bundle: string;
  readonly commits: number;
  readonly refs: number;
  /** Per round, in the order measured: git alone, then the import as its client saw it. */
  readonly rounds: readonly Round[];
  /** The 1-minute load average before the first round and after the last. */
  readonly load: readonly [number, number];
  readonly identicalRefs: boolean;
}

export interface ImportBenchResult {
  readonly packedMiB: number;
  readonly importMs: number;
  readonly floorCloneMs: number;
  readonly floorPushMs: number;
  readonly smallImportMs: readonly number[];
  readonly peakRssMiB: number;
  readonly peakChildRssMiB: number;
  readonly transitions: number;
  readonly rawChunks: number;
  readonly mappedTransitions: number;
  readonly identicalRefs: boolean;
  readonly real: RealHistoryResult;
}

/** Resident set sizes (KiB) of this process's descendants, read from /proc. */
async function descendantsRssKiB(): Promise<number> {
  const parents = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    parents.set(Number(entry), ppid);
    rss.set(Number(entry), Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0));
  }
  let total = 0;
  for (const [pid, value] of rss) {
    let parent = parents.get(pid);
    while (parent !== undefined && parent > 1 && parent !== process.pid) parent = parents.get(parent);
    if (parent === process.pid) total += value;
  }
  return total;
}

export async function measureImport(options: ImportBenchOptions): Promise<ImportBenchResult> {
  process.env[ENV.importChunkSeconds] ??= '600';
  const { stack, endpointsFile, stop } = await startBenchStack('import');
  const work = await mkdtemp(join(tmpdir(), 'bench-import-'));
  const servers: { close(): Promise<void> }[] = [];
  const git = (args: string[], cwd = work) =>
    run('git', args, {
      cwd,
      maxBuffer: 64 << 20,
      env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    });
  try {
    const origins = join(work, 'origins');
    await makeFixtureRepository(join(origins, 'big.git'), {
      commits: options.commits,
      branches: options.branches,
      annotatedTags: options.tags,
      bytesPerCommit: options.bytesPerCommit,
    });
    await makeFixtureRepository(join(origins, 'one.git'), { commits: 1 });
    const sizes = (await git(['count-objects', '-v'], join(origins, 'big.git'))).stdout;
    const packedMiB = Number(/^size-pack: (\d+)/m.exec(sizes)?.[1] ?? 0) / 1024;
    const origin = await serveGitHttp(origins);
    servers.push(origin);

    // The floor: git alone, clone then push, over smart HTTP.
    const targets = join(work, 'targets');
    await git(['init', '--bare', '-q', join(targets, 'big.git')]);
    const target = await serveGitHttp(targets);
    servers.push(target);
    let started = performance.now();
    await git(['clone', '-q', '--mirror', `${origin.url}/big.git`, join(work, 'floor.git')]);
    const floorCloneMs = performance.now() - started;
    started = performance.now();
    await git(['push', '-q', '--mirror', `${target.url}/big.git`], join(work, 'floor.git'));
    const floorPushMs = performance.now() - started;

    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    // A token, as API clients send: a password would add scrypt's deliberate ~300 ms to every call.
    const created = await fetch(`${stack.baseUrl}/authorizations`, {
      method: 'POST',
      headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
      body: JSON.stringify({ scopes: ['repo'], note: 'import benchmark' }),
    });
    const { token } = (await created.json()) as { token: string };
    const headers = { Authorization: `token ${token}`, Accept: 'application/vnd.github.barred-rock-preview' };
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${stack.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
    };
    const execution = (repo: string, attempt: number) => `bench.${repo}.attempt-${attempt}`;
    const statesOf = async (repo: string, attempt: number) =>
      (await stateDurations(stack.stepFunctionsEndpoint, execution(repo, attempt))).map(
        (state) => state.name,
      );
    let peakChildKiB = 0;
    /** PUT → a poll reads `complete`: the times (ms since the epoch) the PUT was sent and answered, and that poll's. */
    const importOnce = async (repo: string, url: string, pollMs = 50, sample = true) => {
      await call('POST', '/user/repos', { name: repo });
      const sentAt = Date.now();
      await call('PUT', `/repos/bench/${repo}/import`, { vcs_url: url, vcs: 'git' });
      const answeredAt = Date.now();
      for (;;) {
        const body = await call('GET', `/repos/bench/${repo}/import`);
        if (body?.status === 'complete') return { sentAt, answeredAt, seenAt: Date.now() };
        if (body?.status === 'error') throw new Error(`import failed: ${JSON.stringify(body)}`);
        if (sample) peakChildKiB = Math.max(peakChildKiB, await descendantsRssKiB());
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    };
    const importMsOf = async (repo: string, url: string) => {
      const { sentAt, seenAt } = await importOnce(repo, url);
      return seenAt - sentAt;
    };

    const smallImportMs: number[] = [];
    for (let i = 0; i < options.smallRuns; i++)
      smallImportMs.push(await importMsOf(`one-${i}`, `${origin.url}/one.git`));
    const importMs = await importMsOf('big', `${origin.url}/big.git`);
    const hostedRefs = (await git(['ls-remote', `${stack.webUrl}/bench/big.git`])).stdout;
    const originRefs = (await git(['ls-remote', '--heads', '--tags', `${origin.url}/big.git`])).stdout;
    const sortLines = (text: string) =>
      text
        .split('\n')
        .filter((line) => line !== '' && !line.endsWith('\tHEAD'))
        .sort()
        .join('\n');
    const states = await statesOf('big', 1);

    // The same import with an author mapped before the push: a rewrite runs.
    await call('POST', '/user/repos', { name: 'mapped' });
    await call('PUT', `/repos/bench/mapped/import`, { vcs_url: `${origin.url}/one.git`, vcs: 'git' });
    let mappedAttempt = 1;
    for (;;) {
      const body = await call('GET', '/repos/bench/mapped/import');
      if (body?.status === 'complete') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const authors = (await call('GET', '/repos/bench/mapped/import/authors')) as unknown as { id: number }[];
    await call('PATCH', `/repos/bench/mapped/import/authors/${authors[0]?.id}`, {
      name: 'Mapped Name',
      email: 'mapped@example.org',
    });
    mappedAttempt = 2;
    for (;;) {
      const body = await call('GET', '/repos/bench/mapped/import');
      if (body?.status === 'complete') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const mappedStates = [...(await statesOf('mapped', 1)), ...(await statesOf('mapped', mappedAttempt))];

    // The real history, imported and copied with git alone in alternation, its origin and the
    // floor's target each served from a process of their own (as the origin is a machine apart).
    const realOrigins = join(work, 'real-origins');
    const real = join(realOrigins, 'real.git');
    await git(['init', '--bare', '-q', real]);
    await git([
      '--git-dir',
      real,
      'fetch',
      '-q',
      REAL_HISTORY_BUNDLE,
      'refs/heads/*:refs/heads/*',
      'refs/tags/*:refs/tags/*',
    ]);
    const realHead = (await git(['bundle', 'list-heads', REAL_HISTORY_BUNDLE])).stdout.includes(
      'refs/heads/master',
    )
      ? 'master'
      : 'main';
    await git(['--git-dir', real, 'symbolic-ref', 'HEAD', `refs/heads/${realHead}`]);
    const realTargets = join(work, 'real-targets');
    await git(['init', '--bare', '-q', join(realTargets, 'unused.git')]);
    const realOrigin = await serveGitHttpApart(realOrigins);
    servers.push(realOrigin);
    const realTarget = await serveGitHttpApart(realTargets);
    servers.push(realTarget);
    const realUrl = `${realOrigin.url}/real.git`;
    const realOriginRefs = sortLines((await git(['ls-remote', '--heads', '--tags', realUrl])).stdout);
    const rounds: Round[] = [];
    let realIdentical = true;
    const loadBefore = loadavg()[0] ?? 0;
    for (let i = 0; i < options.realRuns; i++) {
      await git(['init', '--bare', '-q', join(realTargets, `real-${i}.git`)]);
      const copy = join(work, `real-floor-${i}.git`);
      const floorStarted = performance.now();
      await git(['clone', '-q', '--mirror', realUrl, copy]);
      await git(['push', '-q', '--mirror', `${realTarget.url}/real-${i}.git`], copy);
      const floorMs = performance.now() - floorStarted;
      await rm(copy, { recursive: true, force: true });
      const { sentAt, answeredAt, seenAt } = await importOnce(`real-${i}`, realUrl, options.pollMs, false);
      const history = await executionHistory(stack.stepFunctionsEndpoint, execution(`real-${i}`, 1));
      rounds.push({
        floorMs,
        import: clientPhases(history, sentAt, answeredAt, seenAt),
        stateMs: stateTimes(history),
      });
      const hosted = sortLines((await git(['ls-remote', `${stack.webUrl}/bench/real-${i}.git`])).stdout);
      realIdentical &&= hosted === realOriginRefs;
    }
    const loadAfter = loadavg()[0] ?? 0;

    return {
      real: {
        bundle: REAL_HISTORY_BUNDLE,
        commits: Number((await git(['--git-dir', real, 'rev-list', '--all', '--count'])).stdout.trim()),
        refs: realOriginRefs.split('\n').filter((line) => !line.endsWith('^{}')).length,
        rounds,
        load: [loadBefore, loadAfter],
        identicalRefs: realIdentical,
      },
      packedMiB,
      importMs,
      floorCloneMs,
      floorPushMs,
      smallImportMs,
      peakRssMiB: process.resourceUsage().maxRSS / 1024,
      peakChildRssMiB: peakChildKiB / 1024,
      transitions: states.length,
      rawChunks: states.filter((name) => name === 'ImportRawHistory').length,
      mappedTransitions: mappedStates.length,
      identicalRefs: sortLines(hostedRefs) === sortLines(originRefs),
    };
  } finally {
    for (const server of servers) await server.close();
    await stop();
    await rm(work, { recursive: true, force: true });
  }
}

export function importReport(
  result: ImportBenchResult,
  machine: string,
  options: ImportBenchOptions,
): string {
  const seconds = (value: number) => `${(value / 1000).toFixed(2)} s`;
  const floor = result.floorCloneMs + result.floorPushMs;
  return [
    `Measured ${machine}: a generated repository (\`git fast-import\`) of ${options.commits.toLocaleString('en')} commits, ${options.branches} branches, ${options.tags} annotated tags, ${result.packedMiB.toFixed(0)} MiB packed, served by \`git http-backend\` on 127.0.0.1; imported through the API with a token (PUT → \`complete\`, polling every 50 ms) and, in the same run, copied with git alone.`,
    '',
    '| | time |',
    '|---|---|',
    `| floor: \`git clone --mirror\` + \`git push --mirror\` over smart HTTP | ${seconds(floor)} (${seconds(result.floorCloneMs)} + ${seconds(result.floorPushMs)}) |`,
    `| import through the API | ${seconds(result.importMs)} (**${(result.importMs / floor).toFixed(2)}×** the floor; target ≤ 1.25×) |`,
    `| one-commit import, fixed overhead (median of ${result.smallImportMs.length}) | ${seconds(median(result.smallImportMs))} (target < 2 s) |`,
    '',
    `Refs and ids of the imported repository equal the origin's: **${result.identicalRefs ? 'yes' : 'NO'}**.`,
    `Peak memory: the whole service process (API, workflow, task handlers) ${result.peakRssMiB.toFixed(0)} MiB resident; git processes it ran, summed at their peak sample, ${result.peakChildRssMiB.toFixed(0)} MiB.`,
    `State transitions (states entered) of that import: ${result.transitions}, of which ${result.rawChunks} \`ImportRawHistory\` chunk(s) (target ≤ 30 plus loop iterations); an import with one author mapped after \`complete\` (the first execution plus the republishing one): ${result.mappedTransitions}.`,
    '',
    realHistoryReport(result.real, options.pollMs),
  ].join('\n');
}

/** The real history's lines: the rounds' spreads, the ratios, where the client's wait went. */
function realHistoryReport(real: RealHistoryResult, pollMs: number): string {
  const seconds = (value: number) => `${(value / 1000).toFixed(2)} s`;
  const spread = ({ min, median: middle, max }: Spread) =>
    `${seconds(middle)} (${seconds(min)}–${seconds(max)})`;
  const summary = summarizeRounds(real.rounds);
  const ratios = (values: readonly number[]) => values.map((ratio) => ratio.toFixed(2)).join(', ');
  const { phases } = summary;
  const states = real.rounds[0]?.import.states ?? [];
  return [
    `A real history: \`${basename(real.bundle)}\` (${real.commits.toLocaleString('en')} commits, ${real.refs} branches and tags), served by \`git http-backend\` from a process of its own on 127.0.0.1. ${real.rounds.length} rounds, each the floor (\`git clone --mirror\` from it, then \`git push --mirror\` into an empty repository served the same way) then the import as a client sees it (\`PUT …/import\` sent → a \`GET …/import\`, polled every ${pollMs} ms, reads \`complete\`), alternating so that other work on the machine slows both alike; 1-minute load average ${real.load[0].toFixed(1)} before, ${real.load[1].toFixed(1)} after; medians (min–max).`,
    '',
    '| | time | ÷ floor (median of the rounds) |',
    '|---|---|---|',
    `| floor: \`git clone --mirror\` + \`git push --mirror\` | ${spread(summary.floor)} | |`,
    `| import, PUT → a poll reads \`complete\` | ${spread(summary.seen)} | **${summary.seenRatio.toFixed(2)}×** (rounds ${ratios(summary.seenRatios)}; target ≤ 1×) |`,
    `| import, PUT → the execution's end (its own history, no polling) | ${spread(summary.execution)} | ${summary.executionRatio.toFixed(2)}× (rounds ${ratios(summary.executionRatios)}) |`,
    '',
    `Where the client's wait went (medians), from the PUT sent: its answer ${seconds(phases.request)} and the execution's first event ${seconds(phases.start)} (the PUT answers once the execution has started); then the steps (Task states) ${seconds(phases.steps)}; the rest of the execution (Choice states, transitions, waits) ${seconds(phases.between)}; the execution's end → a poll reads \`complete\` ${seconds(phases.seen - phases.execution)}. States entered: ${states.join(' → ')} (${states.length}); their medians (entered → next state): ${Object.entries(
      summary.stateMs,
    )
      .map(([name, ms]) => `${name} ${seconds(ms)}`)
      .join(', ')}.`,
    '',
    `Refs and ids equal the origin's after every import: **${real.identicalRefs ? 'yes' : 'NO'}**.`,
  ].join('\n');
}
