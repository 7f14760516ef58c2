import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_DEATH_RETRIES } from '#domain/worker-death';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { type AsDeployed, startAsDeployed } from '#test/as-deployed';
import { createUser, personalToken } from '#test/fixtures';
import { importApiCall } from '#test/import-api';

/**
 * Each function's memory size holds its execution environments, as in Lambda: over it the
 * environment is killed and the invocation reported as `Runtime.OutOfMemory`, which the workflow
 * retries like any dead worker, and an import whose step always needs more ends in `error` saying
 * so. The raw step's memory is lowered for the test (the template's `MemorySize` replaced, as a
 * smaller setting would deploy it), and its origin holds one 96 MiB file (zeros: a small pack) that
 * git inflates whole in memory to check it; with the memory the template gives, imports complete.
 */

const PASSWORD = 'memory-pass-1';
/** Lambda's smallest memory size. */
const LOWERED_MIB = 128;
const BIG_FILE_BYTES = 96 * 1024 * 1024;

let work: string;
let origin: OriginServer;

/** A bare repository of one commit holding `bytes` zeros as `big.bin`, written by `git fast-import`. */
async function bigFileRepository(gitDir: string, bytes: number): Promise<void> {
  await mkdir(gitDir, { recursive: true });
  const git = (args: string[]) =>
    spawn('git', args, {
      env: { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_CONFIG_NOSYSTEM: '1', HOME: work },
      stdio: ['pipe', 'ignore', 'inherit'],
    });
  const ended = (child: ReturnType<typeof git>) =>
    new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(await ended(git(['init', '-q', '--bare', '-b', 'main']))).toBe(0);
  async function* stream() {
    yield Buffer.from(`blob\nmark :1\ndata ${bytes}\n`);
    const chunk = Buffer.alloc(8 * 1024 * 1024);
    for (let left = bytes; left > 0; left -= chunk.length)
      yield chunk.subarray(0, Math.min(left, chunk.length));
    yield Buffer.from(
      '\ncommit refs/heads/main\ncommitter Test <test@example.com> 1700000000 +0000\ndata 4\nbig\nM 100644 :1 big.bin\n\n',
    );
  }
  const importer = git(['fast-import', '--quiet']);
  const code = ended(importer);
  await pipeline(Readable.from(stream()), importer.stdin as NodeJS.WritableStream);
  expect(await code).toBe(0);
}

/** One deployed stack for a describe block, with a user and its token. */
function deployedStack(options: Parameters<typeof startAsDeployed>[0]) {
  const it = { deployed: undefined as unknown as AsDeployed, token: '' };
  beforeAll(async () => {
    it.deployed = await startAsDeployed(options);
    const user = await createUser(it.deployed.stack.endpointsFile, 'octocat', PASSWORD);
    it.token = (await personalToken(it.deployed.stack.baseUrl, user.auth, ['repo'])).token;
  }, 600_000);
  afterAll(async () => {
    await it.deployed?.stop();
  });
  return it;
}

/** Creates `repo` and imports `vcsUrl` into it; answers how the import ended. */
async function imported(stack: { deployed: AsDeployed; token: string }, repo: string, vcsUrl: string) {
  const api = (method: string, path: string, body?: unknown) =>
    importApiCall(stack.deployed.stack.baseUrl, stack.token, method, path, body);
  const created = await fetch(`${stack.deployed.stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${stack.token}` },
    body: JSON.stringify({ name: repo }),
  });
  expect(created.status).toBe(201);
  expect((await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: vcsUrl })).status).toBe(201);
  const deadline = Date.now() + 360_000;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (last.status === 'complete' || last.status === 'error') return last;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`import of ${repo} is ${JSON.stringify(last)}\n${await stack.deployed.logs()}`);
}

/** The raw step's environments' logs (`logs()` shows each file's end, after a `--- <file>` line). */
async function rawStepLogs(deployed: AsDeployed): Promise<string[]> {
  return (await deployed.logs()).split(/^--- /m).filter((log) => /^\S*ImportRawHistory\S*\.log\n/.test(log));
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'deployed-memory-'));
  await Promise.all([
    makeFixtureRepository(join(work, 'origins', 'project.git'), {
      commits: 6,
      branches: 2,
      annotatedTags: 1,
    }),
    bigFileRepository(join(work, 'origins', 'big.git'), BIG_FILE_BYTES),
  ]);
  origin = await serveGitHttp(join(work, 'origins'));
}, 300_000);

afterAll(async () => {
  await origin?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the memory sizes the template gives', () => {
  const stack = deployedStack({});

  it('hold an ordinary import: it completes, each environment within its size', async () => {
    const end = await imported(stack, 'ordinary', `${origin.url}/project.git`);
    expect(end, await stack.deployed.logs()).toMatchObject({ status: 'complete' });
    const raw = await rawStepLogs(stack.deployed);
    expect(raw.length).toBeGreaterThan(0);
    for (const log of raw) {
      expect(log).toMatch(/REPORT Memory Size: 3008 MB Max Memory Used: \d+ MB\n/);
      expect(log).not.toMatch(/OutOfMemory/);
    }
  }, 600_000);
});

describe(`the raw step's memory lowered to ${LOWERED_MIB} MB`, () => {
  const stack = deployedStack({ memoryMiB: { ImportRawHistory: LOWERED_MIB } });

  it('kills the step over it, retries it in new environments, and ends the import saying it ran out of memory in the raw step', async () => {
    const end = await imported(stack, 'too-big', `${origin.url}/big.git`);
    const logs = await stack.deployed.logs();
    expect(end, logs).toMatchObject({ status: 'error', failed_step: 'raw' });
    expect(end.error_message).toMatch(
      /^The import's raw history step ended \d+ times: its worker ran out of memory \(Runtime\.OutOfMemory\)/,
    );
    // Each try was a new environment, killed at its memory size.
    const raw = await rawStepLogs(stack.deployed);
    expect(raw, logs).toHaveLength(WORKER_DEATH_RETRIES + 1);
    for (const log of raw)
      expect(log).toMatch(
        new RegExp(
          `REPORT Memory Size: ${LOWERED_MIB} MB .*Status: error Error Type: Runtime\\.OutOfMemory\\n`,
        ),
      );
  }, 600_000);
});
