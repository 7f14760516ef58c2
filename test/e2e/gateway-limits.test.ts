import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_GATEWAY_LIMITS, type LocalHttpServer, startHttpServer } from '#local/http-server';
import { GATEWAY_ERROR_BODIES } from '#shared/errors';
import { ROUTES } from '#shared/routes';
import { createUser, personalToken } from '#test/fixtures';
import { type GitResult, gitClient } from '#test/git-client';
import { json, startTestStack } from '#test/stack';

/**
 * The local API Gateway refuses what API Gateway and Lambda refuse in AWS, with the deployed API's
 * answers: 413 over 10 MB of request, 500 when the event is over Lambda's 6 MB, 502 when the
 * function's result is, 504 past the integration timeout. Real handlers and real git; only the
 * timeout is lowered (on a second server in front of the same functions), to stay fast.
 */

const MB = 1024 * 1024;
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let work: string;
let git: (args: string[], options?: { cwd?: string; password?: string }) => Promise<GitResult>;
let owner: { login: string; auth: string };
let token: string;

const remote = (name: string) =>
  `${stack.webUrl.replace('://', '://x-access-token@')}/${owner.login}/${name}.git`;

async function createRepository(name: string): Promise<void> {
  const response = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(response.status).toBe(201);
}

/** Commits `bytes` random (incompressible) bytes as `file` in `dir` and pushes main. */
async function pushRandom(dir: string, file: string, bytes: number): Promise<GitResult> {
  await writeFile(join(dir, file), randomBytes(bytes));
  expect((await git(['add', file], { cwd: dir })).code).toBe(0);
  expect((await git(['commit', '-qm', file], { cwd: dir })).code).toBe(0);
  return git(['push', '-q', 'origin', 'main'], { cwd: dir, password: token });
}

async function workingCopy(name: string): Promise<string> {
  await createRepository(name);
  const dir = await mkdtemp(join(work, `${name}-`));
  expect((await git(['init', '-q', '-b', 'main', dir])).code).toBe(0);
  expect((await git(['remote', 'add', 'origin', remote(name)], { cwd: dir })).code).toBe(0);
  return dir;
}

beforeAll(async () => {
  stack = await startTestStack();
  work = await mkdtemp(join(tmpdir(), 'gateway-limits-'));
  git = await gitClient();
  owner = await createUser(stack.endpointsFile, 'limits');
  token = (await personalToken(stack.baseUrl, owner.auth, ['repo'])).token;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the local API Gateway at AWS limits', () => {
  it('answers a request body over 10 MB with 413 in GitHub shape, and runs no function', async () => {
    const response = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'too-big', description: 'x'.repeat(10 * MB) }),
    });
    expect(response.status).toBe(413);
    expect(await json(response)).toEqual(GATEWAY_ERROR_BODIES.payloadTooLarge);
    expect((await fetch(`${stack.baseUrl}/repos/${owner.login}/too-big`)).status).toBe(404);
  });

  it("answers 500 when the event is over Lambda's 6 MB (a 7 MB JSON body; a push of a 5 MB pack)", async () => {
    const response = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'seven', description: 'x'.repeat(7 * MB) }),
    });
    expect(response.status).toBe(500);
    expect(await json(response)).toEqual(GATEWAY_ERROR_BODIES.serverError);

    // A binary body reaches the function base64-encoded: 5 MB of pack is about 6.7 MB of event.
    const dir = await workingCopy('five');
    const pushed = await pushRandom(dir, 'five.bin', 5 * MB);
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toMatch(/\b500\b/);
    expect((await git(['ls-remote', remote('five')])).stdout).toBe('');
  });

  it("answers 502 when the function's result is over Lambda's 6 MB: a clone whose pack outgrew it", async () => {
    const dir = await workingCopy('growing');
    // Each push's pack is 3.5 MB (4.7 MB base64), within the limit; so is a clone of the first.
    const first = await pushRandom(dir, 'first.bin', 3.5 * MB);
    expect(first.code, first.stderr).toBe(0);
    const small = await git(['clone', '-q', remote('growing'), join(work, 'small-clone')]);
    expect(small.code, small.stderr).toBe(0);

    const second = await pushRandom(dir, 'second.bin', 3.5 * MB);
    expect(second.code, second.stderr).toBe(0);
    const big = await git(['clone', '-q', remote('growing'), join(work, 'big-clone')]);
    expect(big.code).not.toBe(0);
    expect(big.stderr).toMatch(/\b502\b/);

    // The same answer seen as a client gets it: the upload-pack request for the whole history.
    const head = (await git(['rev-parse', 'HEAD'], { cwd: dir })).stdout.trim();
    const want = `want ${head}\n`;
    const response = await fetch(`${remote('growing').replace('x-access-token@', '')}/git-upload-pack`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-git-upload-pack-request',
        Accept: 'application/x-git-upload-pack-result',
      },
      body: `${(want.length + 4).toString(16).padStart(4, '0')}${want}00000009done\n`,
    });
    expect(response.status).toBe(502);
    expect(await json(response)).toEqual(GATEWAY_ERROR_BODIES.serverError);
  }, 60_000);

  it('leaves the Git LFS object routes unlimited: locally they stand in for S3, which takes objects of any size', async () => {
    await createRepository('media');
    const object = randomBytes(11 * MB);
    const oid = createHash('sha256').update(object).digest('hex');
    const url = `${stack.webUrl}/${owner.login}/media.git/info/lfs/objects/${oid}`;
    const headers = { Authorization: `token ${token}`, 'Content-Type': 'application/octet-stream' };
    const put = await fetch(`${url}?size=${object.length}`, { method: 'PUT', headers, body: object });
    expect(put.status).toBe(200);
    const get = await fetch(url, { headers: { ...headers, Accept: 'application/octet-stream' } });
    expect(get.status).toBe(200);
    expect(Buffer.from(await get.arrayBuffer()).equals(object)).toBe(true);
  });

  describe('with the integration timeout lowered to 20 ms', () => {
    let gateway: LocalHttpServer;
    beforeAll(async () => {
      // A second local API Gateway in front of the same functions and table.
      gateway = await startHttpServer({
        routes: ROUTES,
        port: 0,
        limits: { ...API_GATEWAY_LIMITS, integrationTimeoutMs: 20 },
      });
    });
    afterAll(() => gateway?.stop());

    it('answers 504 when the function has not answered in time (a password check: scrypt)', async () => {
      const request = (base: string) =>
        fetch(`${base}/api/v3/authorizations`, {
          headers: { Authorization: `Basic ${Buffer.from('nobody:not-the-password').toString('base64')}` },
        });
      const late = await request(gateway.url);
      expect(late.status).toBe(504);
      expect(await json(late)).toEqual(GATEWAY_ERROR_BODIES.serverError);
      // The same function answers within the default 29 s.
      expect((await request(stack.webUrl)).status).toBe(401);
    });
  });
});
