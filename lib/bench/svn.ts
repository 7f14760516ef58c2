/**
 * `npm run bench -- svn`: a Subversion import through the running local service (the API, the very
 * ASL file on the local Step Functions endpoint, the task handlers in process, svnrdump, svnadmin,
 * svn-all-fast-export, git) next to `git svn clone --stdlayout` of the same repository from the
 * same `svnserve` on 127.0.0.1, in the same run. The repository is generated as a dump file and
 * loaded with `svnadmin load` (see svn-dump.ts).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetExecutionHistoryCommand, SFNClient } from '@aws-sdk/client-sfn';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { ENV } from '#shared/config';
import { admin, BENCH_PASSWORD, basicAuth, startBenchStack } from './support.ts';
import { makeSvnHistory, type SvnHistoryOptions } from './svn-dump.ts';

const run = promisify(execFile);

export type SvnBenchOptions = SvnHistoryOptions;

export interface SvnBenchResult {
  readonly revisions: number;
  readonly dumpMiB: number;
  readonly generateMs: number;
  readonly importMs: number;
  readonly gitSvnMs: number;
  /** Milliseconds per workflow state (summed over its entries), longest first. */
  readonly states: readonly { readonly name: string; readonly ms: number; readonly entries: number }[];
  readonly importCommits: number;
  readonly gitSvnCommits: number;
  readonly importBranches: number;
  readonly importTags: number;
  readonly gitSvnBranches: number;
  readonly gitSvnTags: number;
  /** Every file at trunk's tip (blob ids by path, `.gitignore` aside) equal in both. */
  readonly sameTrunk: boolean;
  readonly sameBranchTips: boolean;
}

/** Time spent in each state of one execution, from its history's timestamps. */
async function stateDurations(sfn: SFNClient, executionArn: string) {
  const events: { type: string; name?: string; at: number }[] = [];
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(
      new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken }),
    );
    for (const event of page.events ?? [])
      events.push({
        type: event.type ?? '',
        name: event.stateEnteredEventDetails?.name ?? event.stateExitedEventDetails?.name,
        at: event.timestamp?.getTime() ?? 0,
      });
    nextToken = page.nextToken;
  } while (nextToken);
  const totals = new Map<string, { ms: number; entries: number }>();
  const entered = new Map<string, number>();
  for (const event of events) {
    if (event.name === undefined) continue;
    if (event.type.endsWith('StateEntered')) entered.set(event.name, event.at);
    if (event.type.endsWith('StateExited')) {
      const total = totals.get(event.name) ?? { ms: 0, entries: 0 };
      total.ms += event.at - (entered.get(event.name) ?? event.at);
      total.entries += 1;
      totals.set(event.name, total);
    }
  }
  return [...totals].map(([name, total]) => ({ name, ...total })).sort((a, b) => b.ms - a.ms);
}

export async function measureSvn(options: SvnBenchOptions): Promise<SvnBenchResult> {
  process.env[ENV.importChunkSeconds] ??= '600';
  const { stack, endpointsFile, stop } = await startBenchStack('svn');
  const work = await mkdtemp(join(tmpdir(), 'bench-svn-'));
  let origin: SvnServer | undefined;
  const env = {
    PATH: process.env.PATH,
    HOME: work,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    LC_ALL: 'C',
  };
  const git = async (args: string[], cwd = work) =>
    (await run('git', args, { cwd, maxBuffer: 256 << 20, env })).stdout;
  try {
    const origins = join(work, 'origins');
    let started = performance.now();
    await mkdir(origins);
    const history = await makeSvnHistory(origins, 'big', options);
    const generateMs = performance.now() - started;
    await rm(join(origins, 'big.dump'), { force: true });
    origin = await serveSvn(origins);
    const url = origin.url('big');

    // The baseline: git svn alone, from the same server.
    started = performance.now();
    await run('git', ['svn', 'clone', '--quiet', '--stdlayout', url, join(work, 'git-svn')], {
      cwd: work,
      env,
      maxBuffer: 256 << 20,
    });
    const gitSvnMs = performance.now() - started;

    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    const created = await fetch(`${stack.baseUrl}/authorizations`, {
      method: 'POST',
      headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
      body: JSON.stringify({ scopes: ['repo'], note: 'svn import benchmark' }),
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
    await call('POST', '/user/repos', { name: 'big' });
    started = performance.now();
    await call('PUT', '/repos/bench/big/import', { vcs_url: url, vcs: 'subversion' });
    for (;;) {
      const body = await call('GET', '/repos/bench/big/import');
      if (body?.status === 'complete') break;
      if (body?.status === 'error') throw new Error(`import failed: ${JSON.stringify(body)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const importMs = performance.now() - started;

    const sfn = new SFNClient({
      endpoint: stack.stepFunctionsEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const states = await stateDurations(
      sfn,
      'arn:aws:states:us-east-1:123456789012:execution:SourceImport:bench.big.attempt-1',
    );

    // Compare the two results: commits, refs, and the files at each branch tip.
    const imported = join(work, 'imported.git');
    await git(['clone', '-q', '--mirror', `${stack.webUrl}/bench/big.git`, imported]);
    const mirror = join(work, 'git-svn');
    const lines = (text: string) => text.split('\n').filter((line) => line !== '');
    const importHeads = lines(
      await git(['for-each-ref', '--format=%(refname:lstrip=2)', 'refs/heads'], imported),
    );
    const importTags = lines(
      await git(['for-each-ref', '--format=%(refname:lstrip=2)', 'refs/tags'], imported),
    );
    const svnRemotes = lines(
      await git(['for-each-ref', '--format=%(refname:lstrip=3)', 'refs/remotes/origin'], mirror),
    );
    const gitSvnTags = svnRemotes.filter((name) => name.startsWith('tags/'));
    const gitSvnBranches = svnRemotes.filter((name) => !name.startsWith('tags/'));
    const filesAt = async (repo: string, ref: string) =>
      lines(await git(['ls-tree', '-r', ref], repo))
        .filter((line) => !line.endsWith('\t.gitignore'))
        .join('\n');
    const sameTrunk = (await filesAt(imported, 'main')) === (await filesAt(mirror, 'origin/trunk'));
    let sameBranchTips = true;
    for (const branch of gitSvnBranches.filter((name) => name !== 'trunk')) {
      if ((await filesAt(imported, branch)) !== (await filesAt(mirror, `origin/${branch}`)))
        sameBranchTips = false;
    }
    return {
      revisions: history.youngest,
      dumpMiB: history.dumpBytes / 2 ** 20,
      generateMs,
      importMs,
      gitSvnMs,
      states,
      importCommits: Number((await git(['rev-list', '--all', '--count'], imported)).trim()),
      gitSvnCommits: Number((await git(['rev-list', '--remotes', '--count'], mirror)).trim()),
      importBranches: importHeads.length,
      importTags: importTags.length,
      gitSvnBranches: gitSvnBranches.length,
      gitSvnTags: gitSvnTags.length,
      sameTrunk,
      sameBranchTips,
    };
  } finally {
    await origin?.close();
    await stop();
    await rm(work, { recursive: true, force: true });
  }
}

export function svnReport(result: SvnBenchResult, machine: string, options: SvnBenchOptions): string {
  const seconds = (value: number) => `${(value / 1000).toFixed(1)} s`;
  const ratio = result.gitSvnMs / result.importMs;
  const top = result.states
    .slice(0, 4)
    .map(
      (state) => `\`${state.name}\` ${seconds(state.ms)}${state.entries > 1 ? ` (${state.entries}×)` : ''}`,
    )
    .join(', ');
  return [
    `Measured ${machine}: a generated Subversion repository of ${result.revisions.toLocaleString('en')} revisions (standard layout, ${options.branches} branches, ${options.tags} tags, ${options.authors.length} authors, ${options.files} files edited a few lines at a time; a ${result.dumpMiB.toFixed(1)} MiB dump written directly and loaded with \`svnadmin load\` in ${seconds(result.generateMs)}), served by \`svnserve\` on 127.0.0.1; imported through the API with a token (PUT with \`vcs: subversion\` → \`complete\`, polling every 50 ms) and, in the same run, cloned with \`git svn clone --stdlayout\` from the same server.`,
    '',
    '| | time |',
    '|---|---|',
    `| baseline: \`git svn clone --stdlayout\` over svn:// | ${seconds(result.gitSvnMs)} |`,
    `| import through the API | ${seconds(result.importMs)} (**${ratio.toFixed(1)}×** faster than git svn; target ≥ 10×) |`,
    '',
    `Where the import's time goes (workflow states, longest first): ${top}.`,
    `Result: ${result.importCommits} commits, ${result.importBranches} branches, ${result.importTags} annotated tags; git svn made ${result.gitSvnCommits} commits, ${result.gitSvnBranches} branches (trunk included), ${result.gitSvnTags} tags as branches. Files at the tip of trunk (\`main\`) identical: **${result.sameTrunk ? 'yes' : 'NO'}**; at every branch tip: **${result.sameBranchTips ? 'yes' : 'NO'}** (\`.gitignore\` from \`svn:ignore\` aside, which git svn does not write).`,
  ].join('\n');
}
