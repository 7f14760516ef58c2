import { mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GIT_FRONTEND_TASK } from '#cdk/git-frontend';
import { writeLargeCommit } from '#local/git-fixtures';
import { type FrontEndProcess, startFrontEndProcess } from '#local/git-frontend-process';
import { DEFAULT_GIT_MAX_PROCESSES, DEFAULT_LARGE_FILE_BYTES, ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { descendantsOf, processTable } from '#test/process-tree';
import { basicAuth, json, startTestStack } from '#test/stack';
import { peakTreeMemoryDuring, treeMemory } from '#test/tree-memory';
import { hostedRepositoryPath } from '#vcs/hosted-paths';

/**
 * The Git front end's limits (docs/decisions.md, "Git front end limits"), against the front end as
 * its container runs it (`main.ts` in a process of its own) and real git:
 * - a push adding a file over GitHub's 100 MB limit is refused whole, in GitHub's words;
 * - a push over `GIT_MAX_PUSH_BYTES` is refused by git (`receive.maxInputSize`);
 * - git processes are bounded per client and per task (429, 503);
 * - a push whose body trickles is cut off, and its git process with it; a negotiation (upload-pack)
 *   that trickles starts no git process at all, and is cut off too;
 * - clones of the worst repository a user can push (files just at the limit, of zeros and of
 *   random bytes) cost a bounded amount each, so the task's bound on processes keeps its memory
 *   within the task's.
 */

const MiB = 1024 * 1024;
/** Clones at once in the memory test (the bench runs the task's full bound). */
const CONCURRENT_CLONES = Number(process.env.GIT_LIMITS_CLONES || 3);
/**
 * What one serve of the worst repository may cost, with all its git processes: the task's memory
 * less the Node server's share, over the processes it admits at once.
 */
const NODE_SHARE_BYTES = 256 * MiB;
const PER_SERVE_BYTES = (GIT_FRONTEND_TASK.memoryMiB * MiB - NODE_SHARE_BYTES) / DEFAULT_GIT_MAX_PROCESSES;

/** Lowered bounds for the second front end, reachable with a few requests. */
const LOWERED = {
  [ENV.gitMaxProcesses]: '3',
  [ENV.gitMaxProcessesPerClient]: '2',
  [ENV.gitBodyTimeoutSeconds]: '2',
  [ENV.gitMaxPushBytes]: String(MiB),
};

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let work: string;
let git: Awaited<ReturnType<typeof gitClient>>;
let owner: { login: string; auth: string };
let ownerToken: string;
/** A second user, whose push takes a slot of its own. */
let other: { login: string; auth: string };
let otherToken: string;
let defaults: FrontEndProcess;
let lowered: FrontEndProcess;

const repositoriesDir = () => join(dirname(stack.endpointsFile), 'repositories');
const hostedPath = (name: string) => hostedRepositoryPath(repositoriesDir(), owner.login, name);

async function createRepository(name: string): Promise<void> {
  const response = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(response.status).toBe(201);
}

/** A local repository with one commit of `files` (name → size in bytes of zeros), sparse on disk. */
async function localRepository(name: string, files: Readonly<Record<string, number>>): Promise<string> {
  const local = join(work, name);
  expect((await git(['init', '-q', '-b', 'main', local])).code).toBe(0);
  for (const [file, bytes] of Object.entries(files)) {
    const handle = await open(join(local, file), 'w');
    await handle.truncate(bytes);
    await handle.close();
  }
  expect((await git(['add', '.'], { cwd: local })).code).toBe(0);
  expect((await git(['commit', '-qm', name], { cwd: local })).code).toBe(0);
  return local;
}

/** Whether the hosted repository has any ref, and what is in its object store. */
async function hostedState(name: string): Promise<{ refs: string; objects: string[] }> {
  const refs = await git(['--git-dir', hostedPath(name), 'for-each-ref']);
  const objects = (await readdir(join(hostedPath(name), 'objects'), { recursive: true })).sort();
  return { refs: refs.stdout, objects };
}

/**
 * A request to `repo` (`owner/name`) whose body arrives a byte a second, as from `address` (CloudFront's header, which the
 * front end trusts: only CloudFront reaches it in AWS): an anonymous `git-upload-pack`
 * negotiation, or with `auth` a push, whose pack git waits for. Settles with the status, or with
 * `reset` when the connection was cut without one.
 */
function trickle(
  frontEnd: FrontEndProcess,
  repo: string,
  address: string,
  auth?: string,
): Promise<number | 'reset'> {
  return new Promise((resolve) => {
    const service = auth ? 'git-receive-pack' : 'git-upload-pack';
    const request = httpRequest(`${frontEnd.url}/${repo}.git/${service}`, {
      method: 'POST',
      headers: {
        'Content-Type': `application/x-${service}-request`,
        'CloudFront-Viewer-Address': `${address}:40000`,
        ...(auth ? { Authorization: auth } : {}),
      },
    });
    // A pkt-line of 0x32 bytes announced, its content a byte a second: git would wait for it.
    const timer = setInterval(() => request.write('a'), 1000);
    request.on('response', (response) => {
      clearInterval(timer);
      response.resume();
      resolve(response.statusCode ?? 0);
      request.destroy();
    });
    request.on('error', () => {
      clearInterval(timer);
      resolve('reset');
    });
    request.write('0032');
  });
}

/** `info/refs` of a public repository from `address` (anonymously without `auth`): status and text. */
async function advertise(frontEnd: FrontEndProcess, repo: string, address: string, auth?: string) {
  const response = await fetch(
    `${frontEnd.url}/${owner.login}/${repo}.git/info/refs?service=git-upload-pack`,
    {
      headers: { 'CloudFront-Viewer-Address': `${address}:40000`, ...(auth ? { Authorization: auth } : {}) },
    },
  );
  return {
    status: response.status,
    text: await response.text(),
    retryAfter: response.headers.get('retry-after'),
  };
}

/** The git processes under a front end now. */
async function gitProcesses(frontEnd: FrontEndProcess): Promise<string[]> {
  return descendantsOf(await processTable(), frontEnd.process.pid as number).map((entry) => entry.comm);
}

beforeAll(async () => {
  stack = await startTestStack();
  work = await mkdtemp(join(tmpdir(), 'git-frontend-limits-'));
  git = await gitClient();
  owner = await createUser(stack.endpointsFile, 'limitowner');
  ownerToken = (await personalToken(stack.baseUrl, owner.auth, ['repo'])).token;
  other = await createUser(stack.endpointsFile, 'limitother');
  otherToken = (await personalToken(stack.baseUrl, other.auth, ['repo'])).token;
  defaults = await startFrontEndProcess();
  lowered = await startFrontEndProcess({ env: LOWERED });
}, 60_000);

afterAll(async () => {
  for (const frontEnd of [defaults, lowered])
    if (frontEnd?.process.exitCode === null) frontEnd.process.kill('SIGKILL');
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
  if (stack) await rm(repositoriesDir(), { recursive: true, force: true });
});

describe('pushes', () => {
  it("refuses a push adding a file over 100 MB whole, with GitHub's messages, and keeps none of it", async () => {
    expect(DEFAULT_LARGE_FILE_BYTES).toBe(100 * MiB);
    await createRepository('too-large');
    const local = await localRepository('too-large', { 'big.bin': 400 * MiB, 'small.txt': 10 });

    const pushed = await git(['push', `${defaults.url}/${owner.login}/too-large.git`, 'main'], {
      cwd: local,
      password: ownerToken,
    });

    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toContain(
      "remote: error: File big.bin is 400.00 MB; this exceeds GitHub's file size limit of 100.00 MB",
    );
    expect(pushed.stderr).toContain(
      'remote: error: GH001: Large files detected. You may want to try Git Large File Storage - https://git-lfs.github.com.',
    );
    expect(pushed.stderr).toContain('[remote rejected] main -> main (pre-receive hook declined)');
    // No ref, no object, no quarantine: only the empty object store the first push made.
    expect(await hostedState('too-large')).toEqual({ refs: '', objects: ['info', 'pack'] });
    const repository = await json(
      await fetch(`${stack.baseUrl}/repos/${owner.login}/too-large`, {
        headers: { Authorization: owner.auth },
      }),
    );
    expect(repository.size).toBe(0);
  }, 120_000);

  it('takes a file of exactly 100 MB', async () => {
    await createRepository('at-limit');
    const local = await localRepository('at-limit', { 'zeros.bin': 100 * MiB });
    const pushed = await git(['push', '-q', `${defaults.url}/${owner.login}/at-limit.git`, 'main'], {
      cwd: local,
      password: ownerToken,
    });
    expect(pushed.code, pushed.stderr).toBe(0);
    expect((await hostedState('at-limit')).refs).toContain('refs/heads/main');
  }, 120_000);

  it("refuses a pack over GIT_MAX_PUSH_BYTES with git's message", async () => {
    await createRepository('too-much');
    const local = join(work, 'too-much');
    expect((await git(['init', '-q', '-b', 'main', local])).code).toBe(0);
    await writeLargeCommit(join(local, '.git'), 2 * MiB, work, { partBytes: 2 * MiB });

    const pushed = await git(['push', `${lowered.url}/${owner.login}/too-much.git`, 'main'], {
      cwd: local,
      password: ownerToken,
    });

    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toContain('pack exceeds maximum allowed size');
    expect((await hostedState('too-much')).refs).toBe('');
  }, 60_000);
});

describe('git processes at once, and bodies that trickle', () => {
  beforeAll(async () => {
    await createRepository('public');
    const created = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: other.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'other' }),
    });
    expect(created.status).toBe(201);
  });

  it('bounds them per client (429) and per task (503), and frees them as requests end', async () => {
    // Pushes stream their pack into git as it arrives: a trickling one holds its git process.
    const ownerPush = basicAuth(owner.login, ownerToken);
    const held = [
      trickle(lowered, `${owner.login}/public`, '192.0.2.1', ownerPush),
      trickle(lowered, `${owner.login}/public`, '192.0.2.1', ownerPush),
    ];
    await new Promise((resolve) => setTimeout(resolve, 300));

    const third = await advertise(lowered, 'public', '192.0.2.1', ownerPush);
    expect(third).toEqual({
      status: 429,
      text: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.\n',
      retryAfter: '60',
    });
    const heldToo = trickle(lowered, `${other.login}/other`, '192.0.2.2', basicAuth(other.login, otherToken));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const full = await advertise(lowered, 'public', '192.0.2.3');
    expect([full.status, full.text]).toEqual([
      503,
      'The Git service is busy. Please try again in a few minutes.\n',
    ]);
    // git shows the text of a refused advertisement.
    const cloned = await git(['clone', `${lowered.url}/${owner.login}/public.git`, join(work, 'busy')]);
    expect(cloned.stderr).toContain('remote: The Git service is busy.');

    // The trickling bodies are cut off within the body deadline (git's 200 header was written
    // already: the connection is closed without an answer), and the slots are free.
    expect(await Promise.all([...held, heldToo])).toEqual(['reset', 'reset', 'reset']);
    expect((await advertise(lowered, 'public', '192.0.2.1')).status).toBe(200);
  }, 30_000);

  it('cuts off 50 trickling negotiations from 50 addresses without starting git for any', async () => {
    // A negotiation is read whole before git starts: each costs a socket until the body deadline.
    const started = Date.now();
    let most = 0;
    const watching = setInterval(async () => {
      most = Math.max(most, (await gitProcesses(lowered)).length);
    }, 200);
    const statuses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => trickle(lowered, `${owner.login}/public`, `198.51.100.${i + 1}`)),
    );
    clearInterval(watching);
    expect(statuses).toEqual(Array(50).fill(408));
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(most).toBe(0);
    expect(await gitProcesses(lowered)).toEqual([]);
  }, 30_000);
});

describe('memory', () => {
  it(`serves ${CONCURRENT_CLONES} clones at once of files at the limit within the task's share per serve`, async () => {
    await createRepository('worst');
    const local = join(work, 'worst');
    expect((await git(['init', '-q', '-b', 'main', local])).code).toBe(0);
    await writeLargeCommit(join(local, '.git'), DEFAULT_LARGE_FILE_BYTES, work, {
      partBytes: DEFAULT_LARGE_FILE_BYTES,
    });
    expect((await git(['reset', '-q', '--hard'], { cwd: local })).code).toBe(0);
    const zeros = await open(join(local, 'zeros.bin'), 'w');
    await zeros.truncate(DEFAULT_LARGE_FILE_BYTES);
    await zeros.close();
    expect((await git(['add', 'zeros.bin'], { cwd: local })).code).toBe(0);
    expect((await git(['commit', '-qm', 'zeros'], { cwd: local })).code).toBe(0);
    const pushed = await git(['push', '-q', `${defaults.url}/${owner.login}/worst.git`, 'main'], {
      cwd: local,
      password: ownerToken,
    });
    expect(pushed.code, pushed.stderr).toBe(0);

    const root = defaults.process.pid as number;
    const idle = await treeMemory(root);
    const peak = await peakTreeMemoryDuring(root, () =>
      Promise.all(
        Array.from({ length: CONCURRENT_CLONES }, async (_, i) => {
          const target = join(work, `worst-clone-${i}`);
          const cloned = await git([
            '-c',
            `http.extraHeader=CloudFront-Viewer-Address: 203.0.113.${i + 1}:40000`,
            'clone',
            '-q',
            '--bare',
            `${defaults.url}/${owner.login}/worst.git`,
            target,
          ]);
          expect(cloned.code, cloned.stderr).toBe(0);
          await rm(target, { recursive: true, force: true });
        }),
      ),
    );
    const perServe = (peak.pss - idle.pss) / CONCURRENT_CLONES;
    const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
    console.info(
      `git-frontend-limits: ${CONCURRENT_CLONES} clones at once; idle pss ${mib(idle.pss)} (anon ${mib(idle.anon)}); peak pss ${mib(peak.pss)}, anon ${mib(peak.anon)}, rss ${mib(peak.rss)}, ${peak.processes} processes; ${mib(perServe)} per serve, budget ${mib(PER_SERVE_BYTES)}`,
    );
    expect(perServe).toBeLessThan(PER_SERVE_BYTES);
    expect(idle.pss).toBeLessThan(NODE_SHARE_BYTES);
  }, 300_000);
});
