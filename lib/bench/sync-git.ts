/**
 * `npm run bench -- sync-git`: a sync of a followed Git origin against the import of the same
 * history (issue 27: at most a fifth of its time), through the running local service (the API,
 * the very ASL file on the local Step Functions endpoint, the task handlers in process, git on
 * 127.0.0.1). Each round imports a fresh copy of the history into a new repository, follows it,
 * adds 10 commits at the origin and syncs; rounds alternate import and sync, so that other work
 * on the machine slows both alike. The history is a generated one of `commits` commits, or a real
 * one given as a bundle in `BENCH_REAL_BUNDLE` (Lua's whole history has about 6,200 commits).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { executionNameOf } from '#domain/imports';
import { makeFixtureRepository } from '#local/git-fixtures';
import { ENV } from '#shared/config';
import { median } from './measure.ts';
import {
  admin,
  BENCH_PASSWORD,
  basicAuth,
  serveGitHttpApart,
  startBenchStack,
  stateTotals,
} from './support.ts';

const run = promisify(execFile);

const sum = (times: Readonly<Record<string, number>>) =>
  Object.values(times).reduce((total, ms) => total + ms, 0);

export interface SyncGitBenchOptions {
  /** Commits of the generated history (ignored with `BENCH_REAL_BUNDLE`). */
  readonly commits: number;
  readonly bytesPerCommit: number;
  /** Commits the origin gains before each sync. */
  readonly newCommits: number;
  readonly rounds: number;
}

export interface SyncGitBenchResult {
  /** The history: `generated` or the bundle's file name. */
  readonly history: string;
  readonly commits: number;
  readonly refs: number;
  readonly importMs: readonly number[];
  readonly syncMs: readonly number[];
  /** Per round: milliseconds from entering each state of the sync's execution to the next, by state. */
  readonly syncStateMs: readonly Readonly<Record<string, number>>[];
  /** Per round: the import's execution, from its first state entered to its end (no polling in it). */
  readonly importWorkflowMs: readonly number[];
  /** Every sync's hosted refs equalled the origin's, and new_commits the commits added. */
  readonly identical: boolean;
}

export async function measureSyncGit(options: SyncGitBenchOptions): Promise<SyncGitBenchResult> {
  process.env[ENV.importChunkSeconds] ??= '600';
  const { stack, endpointsFile, stop } = await startBenchStack('sync-git');
  const work = await mkdtemp(join(tmpdir(), 'bench-sync-git-'));
  let origin: Awaited<ReturnType<typeof serveGitHttpApart>> | undefined;
  const git = async (args: string[], cwd = work) =>
    (
      await run('git', args, {
        cwd,
        maxBuffer: 64 << 20,
        env: {
          PATH: process.env.PATH,
          HOME: work,
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          GIT_AUTHOR_NAME: 'Bench',
          GIT_AUTHOR_EMAIL: 'bench@example.org',
          GIT_COMMITTER_NAME: 'Bench',
          GIT_COMMITTER_EMAIL: 'bench@example.org',
        },
      })
    ).stdout;
  try {
    const origins = join(work, 'origins');
    const template = join(work, 'template.git');
    const bundle = process.env.BENCH_REAL_BUNDLE;
    if (bundle) {
      await git(['init', '--bare', '-q', template]);
      await git([
        '--git-dir',
        template,
        'fetch',
        '-q',
        bundle,
        'refs/heads/*:refs/heads/*',
        'refs/tags/*:refs/tags/*',
      ]);
      const head = (await git(['bundle', 'list-heads', bundle])).includes('refs/heads/master')
        ? 'master'
        : 'main';
      await git(['--git-dir', template, 'symbolic-ref', 'HEAD', `refs/heads/${head}`]);
    } else
      await makeFixtureRepository(template, {
        commits: options.commits,
        branches: 3,
        annotatedTags: 10,
        bytesPerCommit: options.bytesPerCommit,
      });
    const commits = Number((await git(['--git-dir', template, 'rev-list', '--all', '--count'])).trim());
    const refs = (await git(['--git-dir', template, 'for-each-ref'])).trim().split('\n').length;
    origin = await serveGitHttpApart(origins);

    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    const created = await fetch(`${stack.baseUrl}/authorizations`, {
      method: 'POST',
      headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
      body: JSON.stringify({ scopes: ['repo'], note: 'sync benchmark' }),
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
    const completed = async (repo: string, begun: number) => {
      for (;;) {
        const body = await call('GET', `/repos/bench/${repo}/import`);
        if (body?.status === 'complete') return performance.now() - begun;
        if (body?.status === 'error') throw new Error(`${repo}: ${JSON.stringify(body)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const sortedRefs = async (url: string) =>
      (await git(['ls-remote', '--heads', '--tags', url])).split('\n').filter(Boolean).sort().join('\n');

    const importMs: number[] = [];
    const syncMs: number[] = [];
    const syncStateMs: Record<string, number>[] = [];
    const importWorkflowMs: number[] = [];
    let identical = true;
    for (let round = 0; round < options.rounds; round++) {
      const repo = `history-${round}`;
      const originDir = join(origins, `${repo}.git`);
      await git(['clone', '-q', '--mirror', template, originDir]);
      const url = `${origin.url}/${repo}.git`;
      await call('POST', '/user/repos', { name: repo });
      let begun = performance.now();
      await call('PUT', `/repos/bench/${repo}/import`, { vcs_url: url, vcs: 'git' });
      importMs.push(await completed(repo, begun));
      importWorkflowMs.push(
        sum(
          await stateTotals(
            stack.stepFunctionsEndpoint,
            executionNameOf({ owner: 'bench', repo, attempt: 1 }),
          ),
        ),
      );
      await call('PUT', `/repos/bench/${repo}/import/sync`, { interval_minutes: null });

      // The origin gains commits on its default branch (not measured).
      const checkout = join(work, `checkout-${round}`);
      await git(['clone', '-q', originDir, checkout]);
      for (let i = 0; i < options.newCommits; i++) {
        await writeFile(join(checkout, `new-${i}.txt`), `commit ${i} after the import\n`);
        await git(['add', '.'], checkout);
        await git(['commit', '-qm', `new commit ${i}`], checkout);
      }
      await git(['push', '-q', 'origin', 'HEAD'], checkout);
      await rm(checkout, { recursive: true, force: true });

      begun = performance.now();
      await call('POST', `/repos/bench/${repo}/import/sync`);
      syncMs.push(await completed(repo, begun));
      syncStateMs.push(
        await stateTotals(
          stack.stepFunctionsEndpoint,
          executionNameOf({ owner: 'bench', repo, attempt: 2, sync: true }),
        ),
      );
      const sync = await call('GET', `/repos/bench/${repo}/import/sync`);
      const last = sync?.last_sync as { new_commits?: number } | undefined;
      identical &&=
        last?.new_commits === options.newCommits &&
        (await sortedRefs(`${stack.webUrl}/bench/${repo}.git`)) === (await sortedRefs(url));
    }
    return {
      history: bundle ? basename(bundle) : 'generated',
      commits,
      refs,
      importMs,
      syncMs,
      syncStateMs,
      importWorkflowMs,
      identical,
    };
  } finally {
    await origin?.close();
    await stop();
    await rm(work, { recursive: true, force: true });
  }
}

export function syncGitReport(
  result: SyncGitBenchResult,
  machine: string,
  options: SyncGitBenchOptions,
): string {
  const seconds = (value: number) => `${(value / 1000).toFixed(2)} s`;
  const ratios = result.syncMs.map((value, index) => value / (result.importMs[index] ?? value));
  const range = (values: readonly number[]) =>
    `${seconds(median(values))} (${seconds(Math.min(...values))}–${seconds(Math.max(...values))})`;
  const states = Object.keys(result.syncStateMs[0] ?? {});
  const syncWorkflowMs = result.syncStateMs.map(sum);
  const workflowRatios = syncWorkflowMs.map(
    (value, index) => value / (result.importWorkflowMs[index] ?? value),
  );
  const history =
    result.history === 'generated'
      ? `a generated history (\`git fast-import\`, ${options.bytesPerCommit.toLocaleString('en')} incompressible bytes a commit)`
      : `\`${result.history}\` (\`BENCH_REAL_BUNDLE\`)`;
  return [
    `Measured ${machine}: ${history} of ${result.commits.toLocaleString('en')} commits and ${result.refs} branches and tags, served by \`git http-backend\` on 127.0.0.1 from a process of its own. ${result.importMs.length} rounds, each a new repository: the import through the API (PUT → \`complete\`), then \`PUT …/import/sync\`, ${options.newCommits} commits pushed to the origin's default branch, and \`POST …/import/sync\` → \`complete\` (polling every 50 ms); medians (min–max).`,
    '',
    '| | time |',
    '|---|---|',
    `| import | ${range(result.importMs)} |`,
    `| sync of ${options.newCommits} new commits | ${range(result.syncMs)} |`,
    `| sync ÷ import | **${median(ratios).toFixed(3)}** (per round ${ratios.map((ratio) => ratio.toFixed(3)).join(', ')}; target ≤ 0.2) |`,
    '',
    `The times above are what a client sees, polling every 50 ms: each is late by up to a poll and its request (about 60 ms apart, so a sync reads as 0.27, 0.33 or 0.39 s and little between). Without polling, from the execution's first state entered to its end: import ${range(result.importWorkflowMs)}, sync ${range(syncWorkflowMs)}, sync ÷ import **${median(workflowRatios).toFixed(3)}** (per round ${workflowRatios.map((ratio) => ratio.toFixed(3)).join(', ')}).`,
    '',
    `After every sync the hosted refs equal the origin's and \`new_commits\` is ${options.newCommits}: **${result.identical ? 'yes' : 'NO'}**. Where a sync's time went (median per state, entered → next state): ${states.map((name) => `${name} ${seconds(median(result.syncStateMs.map((times) => times[name] ?? 0)))}`).join(', ')}.`,
  ].join('\n');
}
