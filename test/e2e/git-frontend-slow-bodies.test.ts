import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type ClientRequest, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FrontEndProcess, startFrontEndProcess } from '#local/git-frontend-process';
import { DEFAULT_GIT_MAX_PROCESSES, DEFAULT_GIT_MAX_PROCESSES_PER_CLIENT } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { descendantsOf, processTable } from '#test/process-tree';
import { startTestStack } from '#test/stack';

/**
 * Slow request bodies against the Git front end's bound on git processes (issue 35, item 6): the
 * red team's 4 anonymous addresses × 6 `git-upload-pack` POSTs whose bodies, valid `have` lines,
 * arrive at 700 B/s (above the 500 B/s floor of the body deadline), through the gateway that
 * stands in for CloudFront (each address a loopback address of its own, which the gateway puts in
 * `CloudFront-Viewer-Address` as CloudFront does). They must cost sockets, not git processes:
 * meanwhile no git process runs for them, and the owner's clone, and an anonymous one from
 * another address, succeed.
 */

const SLOW_ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
const SLOW_BYTES_PER_SECOND = 700;
/** How long the slow bodies have been arriving when the others clone. */
const SLOW_FOR_MS = 4_000;

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let frontEnd: FrontEndProcess;
let work: string;
let git: Awaited<ReturnType<typeof gitClient>>;
let owner: { login: string; auth: string };
let token: string;

beforeAll(async () => {
  stack = await startTestStack({
    gitFrontend: async () => {
      frontEnd = await startFrontEndProcess();
      return { url: frontEnd.url, stop: async () => void frontEnd.process.kill('SIGKILL') };
    },
  });
  work = await mkdtemp(join(tmpdir(), 'git-frontend-slow-bodies-'));
  git = await gitClient();
  owner = await createUser(stack.endpointsFile, 'slowowner');
  token = (await personalToken(stack.baseUrl, owner.auth, ['repo'])).token;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'public' }),
  });
  expect(created.status).toBe(201);
  const local = join(work, 'local');
  expect((await git(['init', '-q', '-b', 'main', local])).code).toBe(0);
  await writeFile(join(local, 'README.md'), 'slow bodies\n');
  expect((await git(['add', '.'], { cwd: local })).code).toBe(0);
  expect((await git(['commit', '-qm', 'first'], { cwd: local })).code).toBe(0);
  const pushed = await git(['push', '-q', `${stack.webUrl}/${owner.login}/public.git`, 'main'], {
    cwd: local,
    password: token,
  });
  expect(pushed.code, pushed.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
  if (stack) await rm(join(dirname(stack.endpointsFile), 'repositories'), { recursive: true, force: true });
});

const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;

/**
 * An anonymous upload-pack POST from `address` through the gateway: a want, then `have` lines
 * (made-up commits) at `SLOW_BYTES_PER_SECOND`, for as long as it is left to run.
 */
function slowNegotiation(address: string, want: string, index: number): ClientRequest {
  const url = new URL(`${stack.webUrl}/${owner.login}/public.git/git-upload-pack`);
  const request = httpRequest({
    host: '127.0.0.1',
    port: url.port,
    path: url.pathname,
    localAddress: address,
    method: 'POST',
    headers: { 'Content-Type': 'application/x-git-upload-pack-request' },
  });
  request.on('error', () => undefined);
  request.on('response', (response) => response.resume());
  request.write(`${pkt(`want ${want} multi_ack_detailed side-band-64k ofs-delta\n`)}0000`);
  let sent = 0;
  const timer = setInterval(() => {
    if (request.destroyed) return clearInterval(timer);
    // 14 have lines (50 bytes each) a second: 700 B/s.
    for (let i = 0; i < SLOW_BYTES_PER_SECOND / 50; i++, sent++)
      request.write(pkt(`have ${(index * 1_000_000 + sent).toString(16).padStart(40, 'a')}\n`));
  }, 1000);
  return request;
}

const gitProcesses = async (): Promise<number> =>
  descendantsOf(await processTable(), frontEnd.process.pid as number).filter((entry) =>
    entry.comm.startsWith('git'),
  ).length;

describe('slow upload-pack bodies from several anonymous addresses', () => {
  it('hold no git process, and the owner and other clients clone meanwhile', async () => {
    expect(SLOW_ADDRESSES.length * DEFAULT_GIT_MAX_PROCESSES_PER_CLIENT).toBe(DEFAULT_GIT_MAX_PROCESSES);
    const head = (await git(['ls-remote', `${stack.webUrl}/${owner.login}/public.git`, 'main'])).stdout;
    const want = head.split('\t')[0] ?? '';
    expect(want).toMatch(/^[0-9a-f]{40}$/);
    const slow = SLOW_ADDRESSES.flatMap((address, a) =>
      Array.from({ length: DEFAULT_GIT_MAX_PROCESSES_PER_CLIENT }, (_, i) =>
        slowNegotiation(address, want, a * 100 + i),
      ),
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, SLOW_FOR_MS));
      const held = await gitProcesses();

      // Signed in from the start (git sends credentials to a public repository only when asked).
      const basic = Buffer.from(`${owner.login}:${token}`).toString('base64');
      const signedIn = await git([
        '-c',
        `http.extraHeader=Authorization: Basic ${basic}`,
        'clone',
        '-q',
        `${stack.webUrl}/${owner.login}/public.git`,
        join(work, 'owner-clone'),
      ]);
      const anonymous = await git([
        'clone',
        '-q',
        `${stack.webUrl}/${owner.login}/public.git`,
        join(work, 'anonymous-clone'),
      ]);

      expect({
        held,
        owner: [signedIn.code, signedIn.stderr],
        anonymous: [anonymous.code, anonymous.stderr],
        stillSending: slow.filter((request) => !request.destroyed).length,
      }).toEqual({ held: 0, owner: [0, ''], anonymous: [0, ''], stillSending: slow.length });
    } finally {
      for (const request of slow) request.destroy();
    }
  }, 60_000);
});
