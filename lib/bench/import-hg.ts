/**
 * `npm run bench -- hg`: a Mercurial import through the running local service (the API, the ASL
 * file on the local Step Functions endpoint, the task handlers in process, hg and the converter),
 * next to the floor a person gets with Mercurial alone in the same run: `hg clone` of the same
 * repository from the same `hg serve` on 127.0.0.1.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeHgBulkRepository, serveHg } from '#local/hg-origins';
import { ENV } from '#shared/config';
import { median } from './measure.ts';
import { admin, BENCH_PASSWORD, basicAuth, startBenchStack, stateDurations } from './support.ts';

const run = promisify(execFile);

export interface HgImportBenchOptions {
  readonly revisions: number;
  readonly branchRevisions: number;
  /** Runs of each measurement (the median is reported). */
  readonly runs: number;
}

export interface HgImportBenchResult {
  readonly buildMs: number;
  readonly storeKiB: number;
  readonly floorCloneMs: readonly number[];
  readonly floorBareCloneMs: readonly number[];
  readonly importMs: readonly number[];
  /** Seconds spent in each state of the median import's execution (entered → next entered). */
  readonly stateMs: readonly { readonly name: string; readonly ms: number }[];
  readonly commits: number;
  readonly progressMonotonic: boolean;
  readonly progressSamples: number;
}

export async function measureHgImport(options: HgImportBenchOptions): Promise<HgImportBenchResult> {
  process.env[ENV.importChunkSeconds] ??= '600';
  const { stack, endpointsFile, stop } = await startBenchStack('import-hg');
  const work = await mkdtemp(join(tmpdir(), 'bench-import-hg-'));
  const env = { PATH: process.env.PATH, HOME: work, HGRCPATH: '', HGPLAIN: '1', LC_ALL: 'C' };
  const tool = (command: string, args: string[], cwd = work) =>
    run(command, args, { cwd, env: { ...env, GIT_CONFIG_NOSYSTEM: '1' }, maxBuffer: 64 << 20 });
  const origin = join(work, 'origin');
  let started = performance.now();
  await makeHgBulkRepository(origin, {
    revisions: options.revisions,
    branchRevisions: options.branchRevisions,
  });
  const buildMs = performance.now() - started;
  const server = await serveHg({ repo: origin });
  try {
    const storeKiB = Number((await tool('du', ['-sk', join(origin, '.hg')])).stdout.split('\t')[0]);
    const floorCloneMs: number[] = [];
    const floorBareCloneMs: number[] = [];
    for (let i = 0; i < options.runs; i++) {
      started = performance.now();
      await tool('hg', ['clone', '-q', `${server.url}/`, join(work, `floor-${i}`)]);
      floorCloneMs.push(performance.now() - started);
      started = performance.now();
      await tool('hg', ['clone', '-q', '-U', `${server.url}/`, join(work, `floor-bare-${i}`)]);
      floorBareCloneMs.push(performance.now() - started);
    }

    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    const created = await fetch(`${stack.baseUrl}/authorizations`, {
      method: 'POST',
      headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
      body: JSON.stringify({ scopes: ['repo'], note: 'hg import benchmark' }),
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
    const stateTimes = (repo: string) =>
      stateDurations(stack.stepFunctionsEndpoint, `bench.${repo}.attempt-1`);

    const importMs: number[] = [];
    const percents: number[] = [];
    const counts: number[] = [];
    for (let i = 0; i < options.runs; i++) {
      const repo = `hg-${i}`;
      await call('POST', '/user/repos', { name: repo });
      const begun = performance.now();
      await call('PUT', `/repos/bench/${repo}/import`, { vcs_url: `${server.url}/`, vcs: 'mercurial' });
      for (;;) {
        const body = await call('GET', `/repos/bench/${repo}/import`);
        if (body?.status === 'complete') break;
        if (body?.status === 'error') throw new Error(`import failed: ${JSON.stringify(body)}`);
        if (i === 0 && typeof body?.percent === 'number') percents.push(body.percent);
        if (i === 0 && typeof body?.commit_count === 'number') counts.push(body.commit_count);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      importMs.push(performance.now() - begun);
    }
    const middle = importMs.indexOf(median(importMs));
    const stateMs = await stateTimes(`hg-${middle < 0 ? 0 : middle}`);

    const mirror = join(work, 'hosted.git');
    await tool('git', ['clone', '-q', '--mirror', `${stack.webUrl}/bench/hg-0.git`, mirror]);
    const commits = Number((await tool('git', ['rev-list', '--all', '--count'], mirror)).stdout.trim());
    const rising = (values: number[]) => values.every((value, i) => i === 0 || value >= (values[i - 1] ?? 0));
    return {
      buildMs,
      storeKiB,
      floorCloneMs,
      floorBareCloneMs,
      importMs,
      stateMs,
      commits,
      progressMonotonic: rising(percents) && rising(counts),
      progressSamples: percents.length,
    };
  } finally {
    await server.close();
    await stop();
    await rm(work, { recursive: true, force: true });
  }
}

export function hgImportReport(
  result: HgImportBenchResult,
  machine: string,
  options: HgImportBenchOptions,
): string {
  const seconds = (value: number) => `${(value / 1000).toFixed(2)} s`;
  const floor = median(result.floorCloneMs);
  const bare = median(result.floorBareCloneMs);
  const imported = median(result.importMs);
  const states = result.stateMs.map((state) => `${state.name} ${seconds(state.ms)}`).join(', ');
  return [
    `Measured ${machine}: a generated Mercurial repository (\`hg debugbuilddag\`, ${seconds(result.buildMs)}) of ${options.revisions.toLocaleString('en')} changesets, the last ${options.branchRevisions} on a named branch, each adding one file (${(result.storeKiB / 1024).toFixed(1)} MiB store), served by \`hg serve\` on 127.0.0.1; imported through the API with a token (PUT with \`vcs: mercurial\` → \`complete\`, polling every 50 ms) and, in the same run, cloned with hg alone. Medians of ${options.runs} runs.`,
    '',
    '| | time |',
    '|---|---|',
    `| floor: \`hg clone\` (with the working copy) | ${seconds(floor)} |`,
    `| \`hg clone -U\` (history only) | ${seconds(bare)} |`,
    `| import through the API | ${seconds(imported)} (**${(imported / floor).toFixed(2)}×** the floor, ${(imported / bare).toFixed(2)}× \`hg clone -U\`; target ≤ 4×) |`,
    '',
    `Commits in the hosted repository: ${result.commits.toLocaleString('en')} (the origin has ${options.revisions.toLocaleString('en')} changesets). Progress while importing: ${result.progressSamples} polls, percent and commit_count never went back: **${result.progressMonotonic ? 'yes' : 'NO'}**.`,
    `Where the median import's time went (state entered → next state): ${states}.`,
  ].join('\n');
}
