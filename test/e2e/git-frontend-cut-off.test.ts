import { execFile, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLargeCommit } from '#local/git-fixtures';
import { type FrontEndProcess, startFrontEndProcess } from '#local/git-frontend-process';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { descendantsOf, processTable } from '#test/process-tree';
import { quarantineBytes, quarantines } from '#test/quarantines';
import { basicAuth, startTestStack } from '#test/stack';
import { hostedRepositoryPath } from '#vcs/hosted-paths';

/**
 * A push whose body stops half way (issue 35, item 2), by each path a client can take: straight
 * to the Git front end, and through the gateway that stands in for CloudFront and the load
 * balancer; chunked, as git sends a large push, and with `Content-Length`, as other clients may.
 * The client either hangs up, or stops sending and keeps its connection open (what the front end
 * sees when CloudFront holds the origin connection after its viewer has gone): either way, within
 * seconds, no git process of the push remains and nothing is left in the repository's quarantine
 * (`objects/tmp_objdir-incoming-*`), which would otherwise count in its `size` for a day.
 */

const run = promisify(execFile);
const MiB = 1024 * 1024;
/** The red team's push: 60 MB of random bytes in 150 objects, cut off after half. */
const PUSH_BYTES = 60 * MiB;
const PUSH_FILES = 150;
/** How much of the pack must be in the quarantine before the client stops. */
const QUARANTINED_BYTES = 4 * MiB;
/** The front end's body deadline here: a stalled body is cut off after about this. */
const BODY_TIMEOUT_SECONDS = 3;
/** How long the test waits for the front end to be rid of the push once it is cut off (or stalled). */
const SETTLE_MS = 10_000 + BODY_TIMEOUT_SECONDS * 1000;
const ZERO_ID = '0'.repeat(40);

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let frontEnd: FrontEndProcess;
let work: string;
let owner: { login: string; auth: string };
let token: string;
/** The whole receive-pack request body: commands, then the pack. */
let commands: Buffer;
let packFile: string;
let packBytes: number;

const repositoriesDir = () => join(dirname(stack.endpointsFile), 'repositories');
const hostedPath = (name: string) => hostedRepositoryPath(repositoriesDir(), owner.login, name);

beforeAll(async () => {
  stack = await startTestStack({
    gitFrontend: async () => {
      frontEnd = await startFrontEndProcess({
        env: { [ENV.gitBodyTimeoutSeconds]: String(BODY_TIMEOUT_SECONDS) },
      });
      return { url: frontEnd.url, stop: async () => void frontEnd.process.kill('SIGKILL') };
    },
  });
  work = await mkdtemp(join(tmpdir(), 'git-frontend-cut-off-'));
  owner = await createUser(stack.endpointsFile, 'cutowner');
  token = (await personalToken(stack.baseUrl, owner.auth, ['repo'])).token;
  const source = join(work, 'source.git');
  await run('git', ['init', '-q', '--bare', source]);
  await writeLargeCommit(source, PUSH_BYTES, work, { partBytes: Math.ceil(PUSH_BYTES / PUSH_FILES) });
  const commit = (await run('git', ['--git-dir', source, 'rev-parse', 'main'])).stdout.trim();
  const line = `${ZERO_ID} ${commit} refs/heads/main\0report-status side-band-64k agent=git/2.39.5\n`;
  commands = Buffer.from(`${(line.length + 4).toString(16).padStart(4, '0')}${line}0000`);
  packFile = join(work, 'push.pack');
  const packing = spawn('git', ['--git-dir', source, 'pack-objects', '--stdout', '--revs'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  packing.stdin.end('main\n');
  await pipeline(packing.stdout, createWriteStream(packFile));
  packBytes = (await stat(packFile)).size;
  expect(packBytes).toBeGreaterThan(PUSH_BYTES);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
  if (stack) await rm(repositoriesDir(), { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The git processes under the front end (not the esbuild service of its TypeScript loader). */
const gitProcesses = async (): Promise<string[]> =>
  descendantsOf(await processTable(), frontEnd.process.pid as number)
    .map((entry) => entry.comm)
    .filter((comm) => comm.startsWith('git'));

type Framing = 'chunked' | 'content-length';
type Ending = 'hangs up' | 'stalls';

/**
 * POSTs half the push to `base` and, once the pack is arriving in the quarantine, hangs up or
 * stops sending; then waits until the quarantine and the git processes are gone, or `SETTLE_MS`.
 */
async function cutOffPush(base: string, name: string, framing: Framing, ending: Ending) {
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  const hosted = hostedPath(name);
  const total = commands.length + packBytes;
  const request = httpRequest(`${base}/${owner.login}/${name}.git/git-receive-pack`, {
    method: 'POST',
    headers: {
      Authorization: basicAuth(owner.login, token),
      'Content-Type': 'application/x-git-receive-pack-request',
      Accept: 'application/x-git-receive-pack-result',
      ...(framing === 'content-length' ? { 'Content-Length': String(total) } : {}),
    },
  });
  const ended = new Promise<string>((resolve) => {
    request.on('error', (error) => resolve(`error ${error.message}`));
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(`answered ${response.statusCode}`));
      response.on('error', () => resolve(`cut after ${response.statusCode}`));
      response.on('aborted', () => resolve(`cut after ${response.statusCode}`));
    });
  });
  const half = (await readFile(packFile)).subarray(0, Math.floor(packBytes / 2));
  for (const part of [commands, half])
    if (!request.write(part)) await new Promise((r) => request.once('drain', r));
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50))
    if ((await quarantineBytes(hosted)) >= QUARANTINED_BYTES) break;
  const quarantined = await quarantineBytes(hosted);
  if (ending === 'hangs up') request.destroy();
  const cut = Date.now();
  let left = { quarantines: await quarantines(hosted), processes: await gitProcesses() };
  while ((left.quarantines.length > 0 || left.processes.length > 0) && Date.now() - cut < SETTLE_MS) {
    await sleep(100);
    left = { quarantines: await quarantines(hosted), processes: await gitProcesses() };
  }
  const settledMs = Date.now() - cut;
  request.destroy();
  await ended;
  const refs = await run('git', ['--git-dir', hosted, 'for-each-ref']);
  return { quarantined: quarantined >= QUARANTINED_BYTES, ...left, refs: refs.stdout, settledMs };
}

describe.each([
  ['straight to the front end', () => frontEnd.url],
  ['through the gateway', () => stack.webUrl],
])('a push cut off half way, %s', (path, base) => {
  it.each([
    ['chunked', 'hangs up'],
    ['content-length', 'hangs up'],
    ['chunked', 'stalls'],
    ['content-length', 'stalls'],
  ] as const)(
    '(%s) whose client %s leaves no process and no quarantine',
    async (framing, ending) => {
      const name = `cut-${path.split(' ').at(-1)}-${framing}-${ending.split(' ')[0]}`;
      const left = await cutOffPush(base(), name, framing, ending);
      expect(left).toMatchObject({ quarantined: true, quarantines: [], processes: [], refs: '' });
      // Within seconds of the cut, or of the body deadline: not after a grace for a process that spins.
      expect(left.settledMs).toBeLessThan((ending === 'stalls' ? BODY_TIMEOUT_SECONDS + 1 : 0) * 1000 + 3000);
      console.info(
        `git-frontend-cut-off: ${path}, ${framing}, client ${ending}: settled in ${left.settledMs} ms`,
      );
    },
    90_000,
  );
});
