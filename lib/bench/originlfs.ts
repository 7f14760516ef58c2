/**
 * `npm run bench -- originlfs`: importing a Git origin that uses Git LFS (issue 28) through the
 * running local service (the API, the workflow, the task handlers in process), against what a user
 * would run to copy it: `git clone` then `git lfs fetch --all`. The origin is this service's own
 * front end and LFS server on 127.0.0.1, holding `objects` LFS objects pushed with git-lfs. Rounds
 * alternate the two, so that other work on the machine slows both alike.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { median } from './measure.ts';
import { admin, BENCH_PASSWORD, basicAuth, startBenchStack } from './support.ts';

const run = promisify(execFile);

export interface OriginLfsOptions {
  readonly objects: number;
  readonly objectBytes: number;
  readonly rounds: number;
}

export interface OriginLfsResult {
  readonly totalBytes: number;
  /** The whole import (PUT → `complete`), objects fetched and stored. */
  readonly importMs: readonly number[];
  /** `git clone` + `git lfs fetch --all` of the same origin. */
  readonly gitMs: readonly number[];
}

export async function measureOriginLfs(options: OriginLfsOptions): Promise<OriginLfsResult> {
  const { stack, endpointsFile, stop } = await startBenchStack('originlfs');
  const work = await mkdtemp(join(tmpdir(), 'bench-originlfs-'));
  const askpass = join(work, 'askpass.sh');
  await writeFile(askpass, `#!/bin/sh\nprintf '%s\\n' "$BENCH_GIT_PASSWORD"\n`);
  await chmod(askpass, 0o700);
  const env = {
    PATH: process.env.PATH,
    HOME: work,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: askpass,
  };
  // A token, not the password: every git-lfs request would count as a password sign-in.
  let token = '';
  const git = (args: string[], cwd: string) =>
    run('git', args, { cwd, env: { ...env, BENCH_GIT_PASSWORD: token }, maxBuffer: 64 << 20 });
  const auth = { Authorization: basicAuth('bench', BENCH_PASSWORD) };
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${stack.baseUrl}${path}`, {
      method,
      headers: { ...auth, Accept: 'application/vnd.github.barred-rock-preview' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
  };
  try {
    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    token = String(
      (await call('POST', '/authorizations', { scopes: ['repo'], note: 'originlfs bench' }))?.token,
    );
    await git(['config', '--global', 'user.name', 'Bench'], work);
    await git(['config', '--global', 'user.email', 'bench@example.com'], work);
    await git(['config', '--global', 'credential.username', 'bench'], work);
    await git(['lfs', 'install'], work);
    await call('POST', '/user/repos', { name: 'media' });
    const source = join(work, 'source');
    await git(['init', '-q', '-b', 'main', source], work);
    await git(['lfs', 'track', '*.bin'], source);
    for (let index = 0; index < options.objects; index++)
      await writeFile(join(source, `f${index}.bin`), randomBytes(options.objectBytes));
    await git(['add', '.'], source);
    await git(['commit', '-qm', 'objects'], source);
    const url = `${stack.webUrl}/bench/media.git`;
    await git(['remote', 'add', 'origin', url], source);
    await git(['lfs', 'push', '--all', 'origin'], source);
    await git(['push', '-q', 'origin', 'main'], source);

    const importMs: number[] = [];
    const gitMs: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const name = `copy-${round}`;
      await call('POST', '/user/repos', { name });
      let begun = performance.now();
      await call('PUT', `/repos/bench/${name}/import`, {
        vcs: 'git',
        // By address: the API refuses loopback names in vcs_url.
        vcs_url: url.replace('//localhost:', '//127.0.0.1:'),
      });
      for (;;) {
        const body = await call('GET', `/repos/bench/${name}/import`);
        if (body?.status === 'complete') break;
        if (body?.status === 'error') throw new Error(`${name}: ${JSON.stringify(body)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      importMs.push(performance.now() - begun);
      const report = await call('GET', `/repos/bench/${name}/import/report`);
      if (report?.missing_lfs_objects_count !== 0)
        throw new Error(`missing objects: ${JSON.stringify(report)}`);

      const clone = join(work, `clone-${round}`);
      begun = performance.now();
      await run('git', ['clone', '-q', url, clone], { env: { ...env, GIT_LFS_SKIP_SMUDGE: '1' } });
      await git(['lfs', 'fetch', '--all', 'origin'], clone);
      gitMs.push(performance.now() - begun);
      await rm(clone, { recursive: true, force: true });
    }
    return { totalBytes: options.objects * options.objectBytes, importMs, gitMs };
  } finally {
    await stop();
    await rm(work, { recursive: true, force: true });
  }
}

export function originLfsReport(result: OriginLfsResult, machine: string, options: OriginLfsOptions): string {
  const ratios = result.importMs.map((value, index) => value / (result.gitMs[index] ?? Number.NaN));
  const seconds = (values: readonly number[]) => `${(median(values) / 1000).toFixed(2)} s`;
  const list = (values: readonly number[]) => values.map((value) => (value / 1000).toFixed(2)).join(', ');
  return [
    `Importing a Git origin that uses Git LFS (${machine}): one commit of ${options.objects} LFS objects of ${(options.objectBytes / 1024).toFixed(0)} KiB (${(result.totalBytes / 1024 ** 2).toFixed(0)} MiB), the origin being this service's Git front end on 127.0.0.1; ${options.rounds} alternating rounds.`,
    '',
    '| | median | rounds |',
    '|---|---|---|',
    `| the whole import (PUT → \`complete\`: every object fetched through the guard, checked, stored) | ${seconds(result.importMs)} | ${list(result.importMs)} s |`,
    `| \`git clone\` + \`git lfs fetch --all\` of the origin | ${seconds(result.gitMs)} | ${list(result.gitMs)} s |`,
    `| ratio (import / git, per round) | ${median(ratios).toFixed(2)} | ${ratios.map((value) => value.toFixed(2)).join(', ')} |`,
  ].join('\n');
}
