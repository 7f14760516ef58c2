import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeLargeCommit } from '#local/git-fixtures';
import { type FrontEndProcess, startFrontEndProcess } from '#local/git-frontend-process';
import { createUser, personalToken } from '#test/fixtures';
import {
  commandLine,
  descendantsOf,
  describeProcess,
  type ProcessEntry,
  processTable,
} from '#test/process-tree';
import { quarantineBytes, quarantines } from '#test/quarantines';
import { startTestStack } from '#test/stack';
import { hostedRepositoryPath } from '#vcs/hosted-paths';

/**
 * What a clone or a push the client abandons leaves in the Git front end (issues 24 and 25):
 * `git http-backend` runs `git upload-pack`, which runs `git pack-objects`, or `git receive-pack`,
 * which runs `git index-pack` (or `unpack-objects`, for fewer than 100 objects) into its quarantine
 * directory (`objects/tmp_objdir-incoming-*`). A clone's client is killed while pack-objects is
 * still looking for deltas (seconds of work before it sends a byte), a push's once the pack is
 * arriving in the quarantine; afterwards no process the request started may remain, running or
 * defunct, and no quarantine directory. Processes are checked from outside through `/proc`: the
 * front end's descendants (by parent PID), every process seen under it during the transfer
 * (wherever it was reparented) and every process group those were in.
 *
 * In the task, node is PID 1 of the container's PID namespace and orphans are reparented to it;
 * node never waits for a process it did not start, so they stay zombies unless an init process
 * (ECS `initProcessEnabled`: tini) is PID 1 instead. The last two cases run the front end as PID 1
 * of a PID namespace of its own (`unshare`, which needs root, as CI has).
 */

/** Compressed random files that git tries to delta against each other: a clone packs for seconds. */
const REPOSITORY_BYTES = 64 * 1024 * 1024;
const PART_BYTES = 4 * 1024 * 1024;
/** What a push sends: random, so git sends it as it is, and the server takes about a second. */
const PUSH_BYTES = 64 * 1024 * 1024;
/** How much of the pack must have reached the quarantine before the client is killed. */
const QUARANTINED_BYTES = 1024 * 1024;
/** How long the front end, and the init above it, may take to be rid of an abandoned request. */
const SETTLE_MS = 5_000;
/** A PID namespace of its own with the front end (or `tini`) as PID 1, killed with its parent. */
const OWN_PID_NAMESPACE = ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child'];

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let work: string;
let repositories: string;
let cloneUrlPath: string;
let pusher: { login: string; auth: string; token: string };
const started: FrontEndProcess[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  work = await mkdtemp(join(tmpdir(), 'git-frontend-reaping-'));
  const owner = await createUser(stack.endpointsFile, 'reapowner');
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'packed-slowly' }),
  });
  expect(created.status).toBe(201);
  repositories = join(dirname(stack.endpointsFile), 'repositories');
  const hosted = hostedRepositoryPath(repositories, owner.login, 'packed-slowly');
  await mkdir(hosted, { recursive: true });
  await run('git', ['init', '-q', '--bare', hosted]);
  await writeLargeCommit(hosted, REPOSITORY_BYTES, work, { partBytes: PART_BYTES, slowToServe: true });
  cloneUrlPath = `/${owner.login}/packed-slowly.git`;
  pusher = { ...owner, token: (await personalToken(stack.baseUrl, owner.auth, ['repo'])).token };
}, 120_000);

afterEach(() => {
  for (const frontEnd of started.splice(0))
    if (frontEnd.process.exitCode === null) frontEnd.process.kill('SIGKILL');
});

afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
  if (stack) await rm(join(dirname(stack.endpointsFile), 'repositories'), { recursive: true, force: true });
});

async function frontEndUnder(under: readonly string[] = []): Promise<FrontEndProcess> {
  const frontEnd = await startFrontEndProcess({ under });
  started.push(frontEnd);
  return frontEnd;
}

function run(command: string, args: readonly string[]): Promise<number | null> {
  const child = spawn(command, args, { stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A git command a client runs against the front end, and when it is far enough to cut off. */
interface Transfer {
  /** git's arguments, given the front end's URL. */
  readonly args: (url: string) => string[];
  /** Whether the server side is under way, given the command lines of the processes under it. */
  readonly underWay: (commandLines: readonly string[]) => Promise<boolean>;
}

const cloneOfSlowRepository = (home: string): Transfer => ({
  args: (url) => ['clone', '-q', '--bare', `${url}${cloneUrlPath}`, join(home, 'clone.git')],
  underWay: async (lines) => lines.some((line) => line.includes('pack-objects')),
});

/** A push of `source`'s `main` to the owner's repository `name`, cut off once it is quarantined. */
const pushTo = (name: string, source: string): Transfer => ({
  args: (url) => {
    const target = new URL(`${url}/${pusher.login}/${name}.git`);
    target.username = pusher.login;
    target.password = pusher.token;
    return ['--git-dir', source, 'push', '-q', target.href, 'main'];
  },
  underWay: async (lines) =>
    lines.some((line) => /index-pack|unpack-objects/.test(line)) &&
    (await quarantineBytes(hostedRepositoryPath(repositories, pusher.login, name))) >= QUARANTINED_BYTES,
});

/**
 * Starts `transfer` from a client against `frontEnd`, kills the client (its whole process group:
 * git, its remote helper, index-pack or pack-objects) once the transfer is under way on the
 * server, and then returns what is left, as soon as nothing is or after `settleMs`.
 */
async function abandon(frontEnd: FrontEndProcess, transfer: (home: string) => Transfer, settleMs: number) {
  const root = frontEnd.process.pid as number;
  const before = descendantsOf(await processTable(), root);
  const kept = new Set(before.map((entry) => entry.identity));
  // The front end's own groups (a test runner's, before the fix) hold more than its requests.
  const ownGroups = new Set([...before.map((entry) => entry.pgrp), (await processTable()).get(root)?.pgrp]);
  const seen = new Map<string, ProcessEntry>();

  const home = await mkdtemp(join(work, 'client-'));
  const { args, underWay } = transfer(home);
  const client = spawn('git', args(frontEnd.url), {
    env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    stdio: 'ignore',
    detached: true,
  });
  const clientExit = new Promise((resolve) => client.on('close', resolve));
  let started = false;
  for (const deadline = Date.now() + 60_000; !started && Date.now() < deadline; await sleep(20)) {
    const lines: string[] = [];
    for (const entry of descendantsOf(await processTable(), root)) {
      if (kept.has(entry.identity)) continue;
      seen.set(entry.identity, entry);
      lines.push(await commandLine(entry.pid));
    }
    started = await underWay(lines);
  }
  process.kill(-(client.pid as number), 'SIGKILL');
  await clientExit;
  expect(started, 'the transfer never got under way on the front end').toBe(true);

  const groups = new Set(
    [...seen.values()].map((entry) => entry.pgrp).filter((group) => !ownGroups.has(group)),
  );
  const leftovers = async () => {
    const table = await processTable();
    const below = new Set(descendantsOf(table, root).map((entry) => entry.identity));
    return [...table.values()].filter(
      (entry) =>
        !kept.has(entry.identity) &&
        (below.has(entry.identity) || seen.has(entry.identity) || groups.has(entry.pgrp)),
    );
  };
  let left = await leftovers();
  for (const deadline = Date.now() + settleMs; left.length > 0 && Date.now() < deadline; await sleep(100))
    left = await leftovers();
  return left;
}

describe('the Git front end when a client abandons a clone', () => {
  it('leaves no process of the request behind, running or defunct', async () => {
    const frontEnd = await frontEndUnder();
    const left = await abandon(frontEnd, cloneOfSlowRepository, SETTLE_MS);
    expect(left.map(describeProcess)).toEqual([]);
  });

  it('leaves none as PID 1 of its own PID namespace under tini, as the task runs it', async () => {
    const frontEnd = await frontEndUnder([...OWN_PID_NAMESPACE, 'tini', '--']);
    const left = await abandon(frontEnd, cloneOfSlowRepository, SETTLE_MS);
    expect(left.map(describeProcess)).toEqual([]);
  });

  it('as PID 1 itself, without an init, keeps the killed git processes as zombies (why the task has one)', async () => {
    const frontEnd = await frontEndUnder(OWN_PID_NAMESPACE);
    const left = await abandon(frontEnd, cloneOfSlowRepository, SETTLE_MS);
    const node = descendantsOf(await processTable(), frontEnd.process.pid as number).find(
      (entry) => entry.comm === 'node',
    );
    expect(left.length).toBeGreaterThan(0);
    for (const entry of left)
      expect([entry.state, entry.ppid], describeProcess(entry)).toEqual(['Z', node?.pid]);
  });
});

describe('the Git front end when a client abandons a push', () => {
  async function abandonPush(name: string, partBytes: number) {
    const source = join(work, `${name}-source.git`);
    await run('git', ['init', '-q', '--bare', source]);
    await writeLargeCommit(source, PUSH_BYTES, work, { partBytes });
    const created = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: pusher.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    expect(created.status).toBe(201);
    const frontEnd = await frontEndUnder();
    const left = await abandon(frontEnd, () => pushTo(name, source), SETTLE_MS);
    const hosted = hostedRepositoryPath(repositories, pusher.login, name);
    return {
      left: left.map(describeProcess),
      quarantines: await quarantines(hosted),
      // Cut off before it completed: no branch was made.
      refs: (await readdir(join(hosted, 'refs', 'heads'))).length,
    };
  }

  it('of many objects (index-pack) leaves no process and no quarantine behind', async () => {
    expect(await abandonPush('indexed', 512 * 1024)).toEqual({ left: [], quarantines: [], refs: 0 });
  }, 60_000);

  it('of few objects (unpack-objects) leaves no process and no quarantine behind', async () => {
    expect(await abandonPush('unpacked', PART_BYTES)).toEqual({ left: [], quarantines: [], refs: 0 });
  }, 60_000);
});
