import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordedEvents } from '#local/event-bus';
import { writeLargeCommit } from '#local/git-fixtures';
import { SECURITY_EVENT_SOURCE } from '#shared/security-events';
import { type AsDeployed, startAsDeployed } from '#test/as-deployed';
import { createUser } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { descendantsOf, processTable } from '#test/process-tree';
import { quarantineBytes, quarantines } from '#test/quarantines';
import { hostedRepositoryPath } from '#vcs/hosted-paths';

/**
 * ECS replaces the Git front end's task (a deployment, a scale-in, a task that failed its health
 * check) while a client pushes or clones: the task is killed with everything it started, and a new
 * one serves the same file system. The client fails cleanly; nothing of the cut push is left (no
 * quarantine once the dead task's lease has expired, no ref moved) and nothing of the old task
 * runs; the new task takes the same push, and the repository checks clean.
 */

const PASSWORD = 'replaced-pass-1';
const MiB = 1024 * 1024;
/** Enough that the push is still under way when the task is killed. */
const PUSH_BYTES = 96 * MiB;
const QUARANTINED_BYTES = 8 * MiB;
/** The dead task's lease expires after 60 s, and the next refresh (10 s) sweeps it. */
const SWEPT_WITHIN_MS = 90_000;

let deployed: AsDeployed;
let git: Awaited<ReturnType<typeof gitClient>>;
let work: string;
let big: string;

const hosted = () => hostedRepositoryPath(join(deployed.fileSystem, 'repositories'), 'octocat', 'replaced');
const remote = (port?: number) => {
  const url = new URL(deployed.stack.webUrl);
  if (port !== undefined) url.port = String(port);
  url.username = 'octocat';
  url.password = PASSWORD;
  return `${url.toString().replace(/\/$/, '')}/octocat/replaced.git`;
};
const clientEnv = () => ({ PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1' });

/** Whether a front end task's lease names a quarantine of the repository at `path`. */
async function leased(path: string): Promise<boolean> {
  const dir = join(deployed.fileSystem, 'repositories', '.quarantine-leases');
  const names = (await readdir(dir).catch(() => [])).filter((name) => name.endsWith('.json'));
  const held = await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8').catch(() => '[]')));
  // The lease names paths as the task sees its file system; a quarantine's name is unique.
  const inside = await quarantines(path);
  return held.some((text) => inside.some((name) => text.includes(`/objects/${name}"`)));
}

/** The hosted repository's refs, read on the file system as root. */
async function hostedRefs(): Promise<string> {
  const listed = await git(['-c', 'safe.directory=*', '--git-dir', hosted(), 'show-ref']);
  return listed.stdout;
}

/**
 * A TCP relay to the web origin that passes what the server sends until `holdAfter` bytes have
 * passed, then stops reading from the server (a client reading slowly), until the server goes.
 */
async function stallingRelay(origin: URL, holdAfter: number) {
  let passed = 0;
  const upstreams: Socket[] = [];
  const server = createServer((client) => {
    const upstream = connect(Number(origin.port), origin.hostname);
    upstreams.push(upstream);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      passed += chunk.length;
      client.write(chunk);
      if (passed >= holdAfter) upstream.pause();
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    passed: () => passed,
    /** Reads again: the client gets what the server sent before it went, then the end. */
    release: () => {
      holdAfter = Number.POSITIVE_INFINITY;
      for (const upstream of upstreams) upstream.resume();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function until(what: string, done: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await done()); ) {
    if (Date.now() > deadline)
      throw new Error(`${what}, not within ${timeoutMs} ms\n${await deployed.logs()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Kills the task under `client` once `ready` holds, then starts a new one; the client's exit and output. */
async function replacedUnder(client: ChildProcess, ready: () => Promise<boolean>, afterKill = () => {}) {
  let stderr = '';
  client.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => client.on('close', resolve));
  await until(
    'the transfer never got under way',
    async () => client.exitCode !== null || (await ready()),
    60_000,
  );
  expect(client.exitCode, stderr).toBeNull();
  const old = deployed.frontEnd.sandbox.process.pid as number;
  await deployed.replaceFrontEnd();
  afterKill();
  const code = await exited;
  // Nothing of the killed task runs on.
  expect(descendantsOf(await processTable(), old)).toEqual([]);
  return { code, stderr };
}

beforeAll(async () => {
  deployed = await startAsDeployed();
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'frontend-replaced-'));
  const user = await createUser(deployed.stack.endpointsFile, 'octocat', PASSWORD);
  const created = await fetch(`${deployed.stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: user.auth },
    body: JSON.stringify({ name: 'replaced' }),
  });
  expect(created.status).toBe(201);
  // What the repository holds before: one small commit on main.
  const seed = join(work, 'seed');
  expect((await git(['init', '-q', seed])).code).toBe(0);
  await writeFile(join(seed, 'README'), 'before the task was replaced\n');
  expect((await git(['add', 'README'], { cwd: seed })).code).toBe(0);
  expect((await git(['commit', '-qm', 'seed'], { cwd: seed })).code).toBe(0);
  const seeded = await git(['push', '-q', remote(), 'main'], { cwd: seed });
  expect(seeded.code, seeded.stderr).toBe(0);
  big = join(work, 'big.git');
  expect((await git(['init', '-q', '--bare', big])).code).toBe(0);
  await writeLargeCommit(big, PUSH_BYTES, work, { partBytes: 4 * MiB });
}, 600_000);

afterAll(async () => {
  await deployed?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the Git front end task replaced under a client', () => {
  it('fails a push and a clone cleanly, leaves nothing of them, and the new task takes the push', async () => {
    const refsBefore = await hostedRefs();
    expect(refsBefore).toContain('refs/heads/main');

    // A push killed half way through its pack.
    const pushing = spawn('git', ['push', remote(), 'main:refs/heads/big'], {
      cwd: big,
      env: clientEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // Killed once the task has named the quarantine in its lease: one killed in the quarter second
    // before (FOLLOW_INTERVAL_MS) leaves it to the day's stale sweep, as functions/vcs/quarantine.ts says.
    const push = await replacedUnder(
      pushing,
      async () => (await quarantineBytes(hosted())) >= QUARANTINED_BYTES && (await leased(hosted())),
    );
    expect(push.code, push.stderr).not.toBe(0);
    expect(push.stderr).toMatch(/RPC failed|remote end hung up|Empty reply|failed to push/i);

    // The dead task's quarantine goes once its lease expires; no ref moved.
    await until(
      'the killed push left its quarantine',
      async () => (await quarantines(hosted())).length === 0,
      SWEPT_WITHIN_MS,
    );
    expect(await hostedRefs()).toBe(refsBefore);
    const fsck = await git([
      '-c',
      'safe.directory=*',
      '--git-dir',
      hosted(),
      'fsck',
      '--full',
      '--no-progress',
    ]);
    expect(fsck.code, fsck.stderr).toBe(0);

    // The new task takes the same push.
    const again = await git(['push', '-q', remote(), 'main:refs/heads/big'], { cwd: big });
    expect(again.code, again.stderr).toBe(0);
    expect(await hostedRefs()).toContain('refs/heads/big');
    expect(await quarantines(hosted())).toEqual([]);
    // A clone killed while the pack is sent: the client reads through a relay that holds the rest of
    // the pack once its first MiB has passed, so the task dies mid-transfer whatever the machine's speed.
    const relay = await stallingRelay(new URL(deployed.stack.webUrl), MiB);
    const target = join(work, 'cut-clone');
    const cloning = spawn('git', ['clone', remote(relay.port), target], {
      env: clientEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const clone = await replacedUnder(cloning, async () => relay.passed() >= MiB, relay.release);
    await relay.close();
    expect(clone.code, clone.stderr).not.toBe(0);
    expect(await hostedRefs()).toContain('refs/heads/big');

    const cloned = await git(['clone', '-q', remote(), join(work, 'clone')]);
    expect(cloned.code, cloned.stderr).toBe(0);
    const after = await git([
      '-c',
      'safe.directory=*',
      '--git-dir',
      hosted(),
      'fsck',
      '--full',
      '--no-progress',
    ]);
    expect(after.code, after.stderr).toBe(0);
  }, 300_000);
});

describe('a wrong password at the Git front end', () => {
  it("is a failed sign-in in the person's log and, from the task, on the bus", async () => {
    const wrong = new URL(remote());
    wrong.password = 'not-the-password-1';
    // A push (a public repository's clone asks for no credentials, so git would send none).
    const pushed = await git(['push', wrong.toString(), 'main:refs/heads/never'], {
      cwd: join(work, 'seed'),
    });
    expect(pushed.code).not.toBe(0);
    const log = await fetch(`${deployed.stack.baseUrl}/user/security-log`, {
      headers: { Authorization: `Basic ${Buffer.from(`octocat:${PASSWORD}`).toString('base64')}` },
    });
    expect(log.status).toBe(200);
    expect(await log.json()).toContainEqual(
      expect.objectContaining({
        action: 'user.failed_login',
        detail: 'password',
        actor_type: 'anonymous',
        // The client's address and agent, as CloudFront gives them to the task.
        actor_ip: expect.stringMatching(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/),
        user_agent: expect.stringMatching(/^git\//),
      }),
    );
    // The task runs as ECS runs it (AWS_ECS_FARGATE, no Lambda variables): it publishes too.
    const bus = (await recordedEvents(deployed.stack.eventsFile)).filter(
      (event) => event.source === SECURITY_EVENT_SOURCE && event.detail.action === 'user.failed_login',
    );
    expect(bus).toContainEqual(
      expect.objectContaining({ detail: expect.objectContaining({ user: 'octocat' }) }),
    );
  }, 60_000);
});
