/**
 * `npm run bench -- sync-hg`: a sync of a followed Mercurial origin against a fresh import of the
 * same origin, through the running local service (the API, the ASL file on the local Step
 * Functions endpoint, the task handlers in process, hg and the converter). The origin is a
 * generated history (`makeHgBulkRepository`); each round adds `newRevisions` changesets, syncs the
 * followed repository, then imports the whole origin into a new one: sync and import alternate, so
 * the machine's load weighs on both alike. Each round also checks the two repositories' refs are
 * equal, id for id.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeHgBulkRepository, serveHg } from '#local/hg-origins';
import { ENV } from '#shared/config';
import { median } from './measure.ts';
import { admin, BENCH_PASSWORD, basicAuth, startBenchStack, stateDurations } from './support.ts';

const run = promisify(execFile);

export interface HgSyncBenchOptions {
  readonly revisions: number;
  readonly branchRevisions: number;
  /** Changesets the origin gains before each sync. */
  readonly newRevisions: number;
  readonly rounds: number;
}

export interface HgSyncBenchResult {
  readonly importMs: readonly number[];
  readonly syncMs: readonly number[];
  /** Each round's refs of the synced repository equal those of the round's fresh import. */
  readonly sameRefs: readonly boolean[];
  /** Seconds in each state of the median sync's and import's executions (entered → next entered). */
  readonly syncStates: readonly { readonly name: string; readonly ms: number }[];
  readonly importStates: readonly { readonly name: string; readonly ms: number }[];
  readonly originRevisions: number;
  readonly mapEntries: number;
}

export async function measureHgSync(options: HgSyncBenchOptions): Promise<HgSyncBenchResult> {
  process.env[ENV.importChunkSeconds] ??= '600';
  const { stack, endpointsFile, stop } = await startBenchStack('sync-hg');
  const work = await mkdtemp(join(tmpdir(), 'bench-sync-hg-'));
  const env = {
    PATH: process.env.PATH,
    HOME: work,
    HGRCPATH: '',
    HGPLAIN: '1',
    LC_ALL: 'C',
    HGUSER: 'bench',
  };
  const tool = (command: string, args: string[], cwd = work) =>
    run(command, args, { cwd, env: { ...env, GIT_CONFIG_NOSYSTEM: '1' }, maxBuffer: 64 << 20 });
  const origin = join(work, 'origin');
  await makeHgBulkRepository(origin, {
    revisions: options.revisions,
    branchRevisions: options.branchRevisions,
  });
  await tool('hg', ['update', '-q', 'tip'], origin);
  const server = await serveHg({ repo: origin });
  try {
    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    const created = await fetch(`${stack.baseUrl}/authorizations`, {
      method: 'POST',
      headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
      body: JSON.stringify({ scopes: ['repo'], note: 'hg sync benchmark' }),
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
      return text === '' ? undefined : (JSON.parse(text) as unknown);
    };
    const complete = async (repo: string) => {
      for (;;) {
        const body = (await call('GET', `/repos/bench/${repo}/import`)) as Record<string, unknown>;
        if (body?.status === 'complete') return;
        if (body?.status === 'error') throw new Error(`import failed: ${JSON.stringify(body)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    /** A new repository importing the whole origin; its time, PUT → `complete`. */
    const freshImport = async (repo: string) => {
      await call('POST', '/user/repos', { name: repo });
      const begun = performance.now();
      await call('PUT', `/repos/bench/${repo}/import`, { vcs_url: `${server.url}/`, vcs: 'mercurial' });
      await complete(repo);
      return performance.now() - begun;
    };
    const refs = async (repo: string) =>
      (await tool('git', ['ls-remote', `${stack.webUrl}/bench/${repo}.git`])).stdout;

    const stateTimes = (execution: string) =>
      stateDurations(stack.stepFunctionsEndpoint, `bench.${execution}`);

    await freshImport('followed');
    await call('PUT', '/repos/bench/followed/import/sync', { interval_minutes: null });
    const importMs: number[] = [];
    const syncMs: number[] = [];
    const sameRefs: boolean[] = [];
    let added = 0;
    for (let round = 0; round < options.rounds; round++) {
      for (let i = 0; i < options.newRevisions; i++) {
        await writeFile(join(origin, `new-${++added}`), `${added}\n`);
        await tool('hg', ['commit', '-q', '-A', '-m', `new ${added}`], origin);
      }
      const begun = performance.now();
      await call('POST', '/repos/bench/followed/import/sync');
      await complete('followed');
      syncMs.push(performance.now() - begun);
      importMs.push(await freshImport(`fresh-${round}`));
      sameRefs.push((await refs('followed')) === (await refs(`fresh-${round}`)));
    }
    // The map's size: with one entry a page, the number of the last page.
    const page = await fetch(`${stack.baseUrl}/repos/bench/followed/import/revisions?per_page=1`, {
      headers,
    });
    const last = /[?&]page=(\d+)[^>]*>;\s*rel="last"/.exec(page.headers.get('link') ?? '');
    const middle = (samples: number[]) => Math.max(0, samples.indexOf(median(samples)));
    return {
      importMs,
      syncMs,
      sameRefs,
      // The first sync is the import's second attempt.
      syncStates: await stateTimes(`followed.sync-${middle(syncMs) + 2}`),
      importStates: await stateTimes(`fresh-${middle(importMs)}.attempt-1`),
      originRevisions: options.revisions + added,
      mapEntries: last ? Number(last[1]) : ((await page.json()) as unknown[]).length,
    };
  } finally {
    await server.close();
    await stop();
    await rm(work, { recursive: true, force: true });
  }
}

export function hgSyncReport(
  result: HgSyncBenchResult,
  machine: string,
  options: HgSyncBenchOptions,
): string {
  const seconds = (value: number) => `${(value / 1000).toFixed(2)} s`;
  const imported = median(result.importMs);
  const synced = median(result.syncMs);
  const states = (list: HgSyncBenchResult['syncStates']) =>
    list
      .filter((state) => state.ms >= 5)
      .map((state) => `${state.name} ${seconds(state.ms)}`)
      .join(', ');
  const rounds = result.syncMs
    .map((sync, i) => `${seconds(sync)} / ${seconds(result.importMs[i] ?? 0)}`)
    .join(', ');
  return [
    `Measured ${machine}: a generated Mercurial repository of ${options.revisions.toLocaleString('en')} changesets (the last ${options.branchRevisions} on a named branch, each adding one file), served by \`hg serve\` on 127.0.0.1, imported through the API and followed. Each of ${options.rounds} rounds: the origin gains ${options.newRevisions} changesets, \`POST …/import/sync\` → \`complete\` (the sync), then a new repository imports the whole origin (PUT → \`complete\`, the import); polling every 50 ms.`,
    '',
    '| | median |',
    '|---|---|',
    `| import of the whole origin | ${seconds(imported)} |`,
    `| sync of ${options.newRevisions} new changesets | ${seconds(synced)} |`,
    `| sync / import | **${(synced / imported).toFixed(3)}** (target ≤ 0.2) |`,
    '',
    `Rounds (sync / import): ${rounds}. The synced repository's refs equal the round's fresh import's, id for id: **${result.sameRefs.every(Boolean) ? 'yes' : 'NO'}** (${result.sameRefs.length} rounds). Revision map entries after the last sync: ${result.mapEntries.toLocaleString('en')} (the origin has ${result.originRevisions.toLocaleString('en')} changesets).`,
    `Where the median sync's time went (state entered → next state; states under 5 ms left out): ${states(result.syncStates)}. The median import's: ${states(result.importStates)}.`,
  ].join('\n');
}
