import { mkdtemp, readdir, readFile, readlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { createUser, personalToken } from '#test/fixtures';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * Cancelling an import stops it at once: the import's git (its whole process group) is gone within
 * 2 s of DELETE answering, and nothing of the attempt is written afterwards. The origin answers the
 * refs but never sends the pack, so without the cancel git would wait on it for the step's whole
 * time limit (minutes).
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let token: string;
let origin: OriginServer;
let stalling: { url: string; stalled: number; server: Server };

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Smart HTTP on 127.0.0.1 that serves `origin`'s refs (the advertisement and protocol v2's
 * `ls-refs`) and holds every pack request open without a byte of answer.
 */
async function stallingOrigin(inner: OriginServer) {
  const state = { stalled: 0 };
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const plain = req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
    if (req.method === 'POST' && !plain.includes('command=ls-refs')) {
      state.stalled += 1;
      return; // never answered
    }
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'content-encoding', 'git-protocol', 'accept'])
      if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
    const answer = await fetch(`${inner.url}${req.url}`, {
      method: req.method ?? 'GET',
      headers,
      ...(req.method === 'POST' ? { body } : {}),
    });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    get stalled() {
      return state.stalled;
    },
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Live processes (zombies cannot write) whose working directory or HOME is inside `dir`. */
async function processesIn(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    const [cwd, environ, stat, cmdline] = await Promise.all([
      readlink(`/proc/${pid}/cwd`).catch(() => ''),
      readFile(`/proc/${pid}/environ`, 'utf8').catch(() => ''),
      readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''),
      readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''),
    ]);
    if (stat === '' || / Z /.test(stat.slice(stat.lastIndexOf(')')))) continue;
    const home = environ.split('\0').find((entry) => entry.startsWith('HOME=')) ?? '';
    if (cwd.startsWith(`${dir}/`) || home.startsWith(`HOME=${dir}/`))
      found.push(`${pid} ${cmdline.replaceAll('\0', ' ')}`);
  }
  return found;
}

/** Every file and directory under `dir` (none when it is absent). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => []);
  return entries.map(String);
}

beforeAll(async () => {
  stack = await startTestStack();
  const root = await mkdtemp(join(tmpdir(), 'cancel-origins-'));
  await makeFixtureRepository(join(root, 'project.git'), { commits: 5 });
  origin = await serveGitHttp(root);
  stalling = await stallingOrigin(origin);
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 60_000);

afterAll(async () => {
  stalling?.server.closeAllConnections();
  await new Promise((resolve) => stalling?.server.close(resolve));
  await origin?.close();
  await stack?.stop();
});

describe('cancelling an import', () => {
  it('kills the import’s git within 2 s of DELETE answering, and nothing is written after', async () => {
    const created = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: `token ${token}` },
      body: JSON.stringify({ name: 'stalled' }),
    });
    expect(created.status).toBe(201);
    const workRoot = join(dirname(stack.endpointsFile), 'imports', 'octocat', 'stalled');
    const started = await api('PUT', '/repos/octocat/stalled/import', {
      vcs_url: `${stalling.url}/project.git`,
      vcs: 'git',
    });
    expect(started.status).toBe(201);

    // Prepare: the raw step's git waits on the origin for its pack.
    const deadline = Date.now() + 15_000;
    let running: string[] = [];
    while (Date.now() < deadline) {
      running = await processesIn(workRoot);
      if (stalling.stalled > 0 && running.some((line) => /\bgit\b/.test(line))) break;
      await sleep(100);
    }
    expect(stalling.stalled).toBeGreaterThan(0);
    expect(running.length).toBeGreaterThan(0);

    // Act.
    expect((await api('DELETE', '/repos/octocat/stalled/import')).status).toBe(204);
    const answered = Date.now();

    // Assess: within 2 s no process of the import is left.
    let left = await processesIn(workRoot);
    while (left.length > 0 && Date.now() - answered < 2000) {
      await sleep(50);
      left = await processesIn(workRoot);
    }
    expect(left).toEqual([]);

    // ... and a few seconds later nothing was written: no import, no files of the attempt.
    await sleep(3000);
    expect((await api('GET', '/repos/octocat/stalled/import')).status).toBe(404);
    expect(await filesUnder(workRoot)).toEqual([]);
  }, 30_000);
});
