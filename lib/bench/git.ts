/**
 * `npm run bench -- git`: a clone and a push of a 1 GiB repository through the Git front end
 * (`functions/git-server/main.ts` in a process of its own, as its container runs it, with
 * authentication and the push bookkeeping), next to the floor: `git clone` and `git push` against
 * plain `git http-backend` behind a bare `node:http` CGI server (`lib/local/git-origins.ts`), on
 * the same content, in the same run, alternating. Also the front end's peak resident
 * memory growth during each transfer (`VmHWM`, reset before it).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { writeLargeCommit } from '#local/git-fixtures';
import { type FrontEndProcess, startFrontEndProcess } from '#local/git-frontend-process';
import { serveGitHttp } from '#local/git-origins';
import { config } from '#shared/config';
import { median } from './measure.ts';
import { admin, BENCH_PASSWORD, basicAuth, startBenchStack } from './support.ts';

const MiB = 1024 * 1024;

export interface GitTransfer {
  readonly frontEndMs: number[];
  readonly floorMs: number[];
  /** Peak resident memory growth of the front end over each of its runs. */
  readonly growthBytes: number[];
}

export interface GitBench {
  readonly bytes: number;
  readonly clone: GitTransfer;
  readonly push: GitTransfer;
}

const exec = promisify(execFile);

/** A front-end transfer's duration and the front end's memory growth during it. */
async function timedGrowth(
  frontEnd: FrontEndProcess,
  transfer: () => Promise<unknown>,
): Promise<[number, number]> {
  let ms = 0;
  const growth = await frontEnd.growthDuring(async () => {
    ms = await timed(transfer);
  });
  return [ms, growth];
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

export async function measureGit(bytes = 1024 * MiB, runs = 2): Promise<GitBench> {
  const { stack, endpointsFile, stop } = await startBenchStack('git');
  const work = await mkdtemp(join(tmpdir(), 'bench-git-'));
  let closeFloor = async (): Promise<void> => undefined;
  const frontEnd = await startFrontEndProcess();
  try {
    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    const auth = basicAuth('bench', BENCH_PASSWORD);
    const createRepository = async (name: string) => {
      const response = await fetch(`${stack.baseUrl}/user/repos`, {
        method: 'POST',
        headers: { Authorization: auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name }),
      });
      if (response.status !== 201) throw new Error(`creating ${name}: ${response.status}`);
    };
    // Plain git with the password from an askpass, as a user's git would get it.
    const askpass = join(work, 'askpass.sh');
    await writeFile(askpass, `#!/bin/sh\nprintf '%s\\n' '${BENCH_PASSWORD}'\n`, { mode: 0o700 });
    const git = (args: string[], cwd = work) =>
      exec('git', args, {
        cwd,
        maxBuffer: 64 * MiB,
        env: {
          PATH: process.env.PATH,
          HOME: work,
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_ASKPASS: askpass,
          GIT_TERMINAL_PROMPT: '0',
        },
      });

    const source = join(work, 'source');
    await git(['init', '-q', '-b', 'main', source]);
    await writeLargeCommit(join(source, '.git'), bytes, work);
    const floorRoot = join(work, 'floor');
    await mkdir(floorRoot);
    const floorServer = await serveGitHttp(floorRoot);
    closeFloor = () => floorServer.close();

    // Pushes first, each into an empty repository (the floor's made by hand, the front end's by
    // the API); then clones of what the first push of each wrote.
    const push: GitTransfer = { frontEndMs: [], floorMs: [], growthBytes: [] };
    for (let run = 0; run < runs; run++) {
      await git(['init', '-q', '--bare', join(floorRoot, `pushed-${run}.git`)]);
      push.floorMs.push(
        await timed(() => git(['push', '-q', `${floorServer.url}/pushed-${run}.git`, 'main'], source)),
      );
      await createRepository(`pushed-${run}`);
      const [ms, growth] = await timedGrowth(frontEnd, () =>
        git(
          ['push', '-q', `http://bench@127.0.0.1:${frontEnd.port}/bench/pushed-${run}.git`, 'main'],
          source,
        ),
      );
      push.frontEndMs.push(ms);
      push.growthBytes.push(growth);
    }
    const clone: GitTransfer = { frontEndMs: [], floorMs: [], growthBytes: [] };
    for (let run = 0; run < runs; run++) {
      const target = join(work, `clone-${run}`);
      clone.floorMs.push(
        await timed(() => git(['clone', '-q', '--bare', `${floorServer.url}/pushed-0.git`, target])),
      );
      await rm(target, { recursive: true, force: true });
      const [ms, growth] = await timedGrowth(frontEnd, () =>
        git(['clone', '-q', '--bare', `http://bench@127.0.0.1:${frontEnd.port}/bench/pushed-0.git`, target]),
      );
      clone.frontEndMs.push(ms);
      clone.growthBytes.push(growth);
      await rm(target, { recursive: true, force: true });
    }
    return { bytes, clone, push };
  } finally {
    frontEnd.process.kill('SIGTERM');
    await closeFloor();
    await rm(work, { recursive: true, force: true });
    await rm(config().repositoriesDir, { recursive: true, force: true });
    await stop();
  }
}

export function gitReport(result: GitBench, machine: string): string {
  const row = (name: string, transfer: GitTransfer) => {
    const front = median(transfer.frontEndMs);
    const floor = median(transfer.floorMs);
    const rate = (ms: number) => `${((result.bytes / MiB / ms) * 1000).toFixed(0)} MiB/s`;
    return `| ${name} | ${(front / 1000).toFixed(1)} s (${rate(front)}) | ${(floor / 1000).toFixed(1)} s (${rate(floor)}) | **${(floor / front).toFixed(2)}×** | ${(Math.max(...transfer.growthBytes) / MiB).toFixed(0)} MiB |`;
  };
  return [
    `Measured ${machine}: a repository of ${(result.bytes / MiB).toFixed(0)} MiB (one commit of random content, packed without compression), ${result.clone.frontEndMs.length} runs of each, alternating; medians. Front end: \`functions/git-server/main.ts\` in its own process (authentication, the push bookkeeping, streamed \`git http-backend\`). Floor: the same content behind plain \`git http-backend\` in a bare \`node:http\` CGI server. Ratio: floor time / front-end time (target ≥ 0.8×). Memory: the front end's largest peak RSS growth over a transfer (target < 150 MB).`,
    '',
    '| Transfer | Front end | Floor | Ratio | Front-end RSS growth |',
    '|---|---|---|---|---|',
    row('`git clone --bare`', result.clone),
    row('`git push` into an empty repository', result.push),
  ].join('\n');
}
