/**
 * `npm run bench -- sync-svn`: a sync of a followed Subversion origin against a full import of the
 * same origin, through the running local service (API, the ASL file on the local Step Functions
 * endpoint, the task handlers in process). The origin is a generated history (`svn-dump.ts`)
 * served by `svnserve` on 127.0.0.1; each round adds 10 revisions (`svnmucc` commits to trunk),
 * syncs the followed repository, then imports the origin whole into a new repository, so sync and
 * import alternate under the same load. Each round also checks the synced repository's refs equal
 * the fresh import's, id for id.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { ENV } from '#shared/config';
import { admin, BENCH_PASSWORD, basicAuth, startBenchStack } from './support.ts';
import { makeSvnHistory, type SvnHistoryOptions } from './svn-dump.ts';

const run = promisify(execFile);

export interface SyncSvnOptions extends SvnHistoryOptions {
  readonly rounds: number;
  /** Revisions added at the origin before each sync. */
  readonly added: number;
}

export interface SyncSvnRound {
  readonly importMs: number;
  readonly syncMs: number;
  /** The synced repository's refs equal a fresh import's, id for id. */
  readonly sameAsImport: boolean;
}

export interface SyncSvnResult {
  readonly revisions: number;
  readonly firstImportMs: number;
  readonly rounds: readonly SyncSvnRound[];
}

export async function measureSyncSvn(options: SyncSvnOptions): Promise<SyncSvnResult> {
  process.env[ENV.importChunkSeconds] ??= '600';
  const { stack, endpointsFile, stop } = await startBenchStack('sync-svn');
  const work = await mkdtemp(join(tmpdir(), 'bench-sync-svn-'));
  let origin: SvnServer | undefined;
  const env = { PATH: process.env.PATH, HOME: work, LC_ALL: 'C' };
  try {
    const origins = join(work, 'origins');
    await mkdir(origins);
    const history = await makeSvnHistory(origins, 'big', options);
    await rm(join(origins, 'big.dump'), { force: true });
    origin = await serveSvn(origins);
    const url = origin.url('big');

    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    const created = await fetch(`${stack.baseUrl}/authorizations`, {
      method: 'POST',
      headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
      body: JSON.stringify({ scopes: ['repo'], note: 'svn sync benchmark' }),
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
    const complete = async (repo: string) => {
      for (;;) {
        const body = await call('GET', `/repos/bench/${repo}/import`);
        if (body?.status === 'complete') return;
        if (body?.status === 'error') throw new Error(`import failed: ${JSON.stringify(body)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const imported = async (repo: string) => {
      await call('POST', '/user/repos', { name: repo });
      const started = performance.now();
      await call('PUT', `/repos/bench/${repo}/import`, { vcs_url: url, vcs: 'subversion' });
      await complete(repo);
      return performance.now() - started;
    };
    const refs = async (repo: string) =>
      (await run('git', ['ls-remote', `${stack.webUrl}/bench/${repo}.git`], { env, maxBuffer: 64 << 20 }))
        .stdout;

    const firstImportMs = await imported('followed');
    await call('PUT', '/repos/bench/followed/import/sync', { interval_minutes: null });
    let revision = history.youngest;
    const rounds: SyncSvnRound[] = [];
    const file = join(work, 'added.txt');
    for (let round = 1; round <= options.rounds; round++) {
      for (let added = 0; added < options.added; added++) {
        revision += 1;
        await writeFile(file, `r${revision}\n`);
        await run(
          'svnmucc',
          [
            '-U',
            `file://${history.path}`,
            '-m',
            `r${revision}`,
            '--username',
            'ada',
            'put',
            file,
            'trunk/added.txt',
          ],
          { env },
        );
      }
      const started = performance.now();
      await call('POST', '/repos/bench/followed/import/sync');
      await complete('followed');
      const syncMs = performance.now() - started;
      const importMs = await imported(`fresh-${round}`);
      rounds.push({
        importMs,
        syncMs,
        sameAsImport: (await refs('followed')) === (await refs(`fresh-${round}`)),
      });
    }
    return { revisions: history.youngest, firstImportMs, rounds };
  } finally {
    await origin?.close();
    await stop();
    await rm(work, { recursive: true, force: true });
  }
}

export function syncSvnReport(result: SyncSvnResult, machine: string, options: SyncSvnOptions): string {
  const seconds = (value: number) => `${(value / 1000).toFixed(1)} s`;
  const ratios = result.rounds.map((round) => round.syncMs / round.importMs);
  const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)] ?? Number.NaN;
  const rows = result.rounds.map(
    (round, index) =>
      `| ${index + 1} | ${seconds(round.syncMs)} | ${seconds(round.importMs)} | ${(round.syncMs / round.importMs).toFixed(3)} | ${round.sameAsImport ? 'yes' : '**no**'} |`,
  );
  return [
    `Measured ${machine}: a generated Subversion repository of ${result.revisions.toLocaleString('en')} revisions (standard layout, ${options.branches} branches, ${options.tags} tags, ${options.files} files) served by \`svnserve\` on 127.0.0.1, imported through the API (${seconds(result.firstImportMs)}) and followed. Each round adds ${options.added} revisions at the origin, syncs (POST \`…/import/sync\` → \`complete\`), then imports the origin whole into a new repository: sync and import alternate under the same load.`,
    '',
    '| round | sync | full import | sync / import | refs equal, id for id |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `Median sync-to-import ratio: **${median.toFixed(3)}** (target ≤ 0.2).`,
  ].join('\n');
}
