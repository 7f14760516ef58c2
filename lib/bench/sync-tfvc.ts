/**
 * `npm run bench -- sync-tfvc`: a sync of a followed TFVC project against the import of the same
 * project, through the running local service (the API, the ASL file on the local Step Functions
 * endpoint, the task handlers in process) and the TFVC stand-in on 127.0.0.1. Each round imports
 * the generated project into a new repository, starts following, adds changesets at the stand-in
 * and syncs: imports and syncs alternate, so a change in the machine's load touches both.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { TFVC_USERS } from '#local/tfvc-alpha';
import { serveTfvc, type TfvcChangesetSpec, type TfvcProjectSpec } from '#local/tfvc-origin';
import { ENV } from '#shared/config';
import { median } from './measure.ts';
import { admin, BENCH_PASSWORD, basicAuth, startBenchStack, stateDurations } from './support.ts';

const run = promisify(execFile);

export interface SyncTfvcBenchOptions {
  /** Changesets of the imported project. */
  readonly changesets: number;
  /** Changesets added before each sync. */
  readonly added: number;
  /** Files the changesets add and edit, one each. */
  readonly files: number;
  readonly rounds: number;
}

export interface SyncTfvcBenchResult {
  readonly importMs: readonly number[];
  readonly syncMs: readonly number[];
  /** Seconds spent in each state of the median sync's execution. */
  readonly syncStateMs: readonly { readonly name: string; readonly ms: number }[];
  /** The stand-in's requests during the median sync, and during the median import. */
  readonly syncRequests: number;
  readonly importRequests: number;
  /** The last synced repository's refs and revision map equal a fresh import's of the grown project. */
  readonly sameAsFresh: boolean;
  readonly mapEntries: number;
}

/** Changeset 1 makes `src`; each later one adds or edits one of `files` files. */
function project(count: number, files: number): TfvcProjectSpec {
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
                path: `src/file-${id % files}.txt`,
                changeType: id - 1 <= files ? 'add, edit, encoding' : 'edit',
                content: `written by changeset ${id}\n`.repeat(20),
              },
            ],
    });
  return { name: 'Bulk', changesets };
}

export async function measureSyncTfvc(options: SyncTfvcBenchOptions): Promise<SyncTfvcBenchResult> {
  process.env[ENV.importChunkSeconds] ??= '600';
  const { stack, endpointsFile, stop } = await startBenchStack('sync-tfvc');
  const base = project(options.changesets, options.files);
  const grown = project(options.changesets + options.added, options.files);
  const origin = await serveTfvc({ projects: [base] });
  try {
    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    const created = await fetch(`${stack.baseUrl}/authorizations`, {
      method: 'POST',
      headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
      body: JSON.stringify({ scopes: ['repo'], note: 'tfvc sync benchmark' }),
    });
    const { token } = (await created.json()) as { token: string };
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${stack.baseUrl}${path}`, {
        method,
        headers: { Authorization: `token ${token}`, Accept: 'application/vnd.github.barred-rock-preview' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return text === '' ? undefined : (JSON.parse(text) as unknown);
    };
    const complete = async (repo: string) => {
      for (;;) {
        const body = (await call('GET', `/repos/bench/${repo}/import`)) as Record<string, unknown>;
        if (body.status === 'complete') return;
        if (body.status === 'error') throw new Error(`import failed: ${JSON.stringify(body)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const importProject = async (repo: string) => {
      await call('POST', '/user/repos', { name: repo });
      const begun = performance.now();
      await call('PUT', `/repos/bench/${repo}/import`, {
        vcs_url: origin.collectionUrl,
        vcs: 'tfvc',
        tfvc_project: 'Bulk',
      });
      await complete(repo);
      return performance.now() - begun;
    };

    const importMs: number[] = [];
    const syncMs: number[] = [];
    const importRequests: number[] = [];
    const syncRequests: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const repo = `tfvc-${round}`;
      origin.replaceHistory([base]);
      let seen = origin.requests.length;
      importMs.push(await importProject(repo));
      importRequests.push(origin.requests.length - seen);
      await call('PUT', `/repos/bench/${repo}/import/sync`, { interval_minutes: null });
      origin.replaceHistory([grown]);
      seen = origin.requests.length;
      const begun = performance.now();
      await call('POST', `/repos/bench/${repo}/import/sync`);
      await complete(repo);
      syncMs.push(performance.now() - begun);
      syncRequests.push(origin.requests.length - seen);
    }

    const middle = Math.max(0, syncMs.indexOf(median(syncMs)));
    const syncStateMs = await stateTimes(stack.stepFunctionsEndpoint, `bench.tfvc-${middle}.sync-2`);
    const last = `tfvc-${options.rounds - 1}`;
    await importProject('tfvc-fresh');
    const refs = async (repo: string) =>
      (await run('git', ['ls-remote', `${stack.webUrl}/bench/${repo}.git`], { maxBuffer: 1 << 20 })).stdout;
    const map = async (repo: string) => {
      const entries: unknown[] = [];
      for (let page = 1; ; page++) {
        const body = (await call('GET', `/repos/bench/${repo}/import/revisions?per_page=100&page=${page}`)) as
          | unknown[]
          | undefined;
        if (!body || body.length === 0) return entries;
        entries.push(...body);
      }
    };
    const syncedMap = await map(last);
    const sameAsFresh =
      (await refs(last)) === (await refs('tfvc-fresh')) &&
      JSON.stringify(syncedMap) === JSON.stringify(await map('tfvc-fresh'));
    return {
      importMs,
      syncMs,
      syncStateMs,
      importRequests: median(importRequests),
      syncRequests: median(syncRequests),
      sameAsFresh,
      mapEntries: syncedMap.length,
    };
  } finally {
    await origin.close();
    await stop();
  }
}

const stateTimes = stateDurations;

export function syncTfvcReport(
  result: SyncTfvcBenchResult,
  machine: string,
  options: SyncTfvcBenchOptions,
): string {
  const seconds = (value: number) => `${(value / 1000).toFixed(2)} s`;
  const ratios = result.syncMs.map((sync, i) => sync / (result.importMs[i] ?? Number.NaN));
  const ratio = median(ratios);
  const states = result.syncStateMs.map((state) => `${state.name} ${seconds(state.ms)}`).join(', ');
  return [
    `Measured ${machine}: a generated TFVC project of ${options.changesets.toLocaleString('en')} changesets (each adds or edits one of ${options.files} files of ~500 bytes) on the TFVC stand-in (\`lib/local/tfvc-origin.ts\`, 127.0.0.1, pages of 100); in each of ${options.rounds} rounds, imported through the API into a new repository (PUT → \`complete\`, polling every 50 ms), then followed, ${options.added} changesets added at the stand-in and synced (POST \`…/import/sync\` → \`complete\`). Imports and syncs alternate.`,
    '',
    '| round | import | sync | sync / import |',
    '|---|---|---|---|',
    ...result.importMs.map(
      (imported, i) =>
        `| ${i + 1} | ${seconds(imported)} | ${seconds(result.syncMs[i] ?? 0)} | ${(ratios[i] ?? 0).toFixed(3)} |`,
    ),
    '',
    `Median sync-to-import ratio: **${ratio.toFixed(3)}** (target ≤ 0.2). Requests to the origin: ${result.importRequests.toLocaleString('en')} for an import, ${result.syncRequests} for a sync.`,
    `The last synced repository's refs and its revision map (${result.mapEntries.toLocaleString('en')} entries) equal a fresh import's of the grown project: **${result.sameAsFresh ? 'yes' : 'NO'}**.`,
    `Where the median sync's time went (state entered → next state): ${states}.`,
  ].join('\n');
}
