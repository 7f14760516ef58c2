import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_GATEWAY_LIMITS, type LocalHttpServer, startHttpServer } from '#local/http-server';
import { MAX_REQUEST_BODY_BYTES } from '#shared/body-limit';
import { GATEWAY_ERROR_BODIES } from '#shared/errors';
import { ROUTES } from '#shared/routes';
import { createUser, personalToken } from '#test/fixtures';
import { type GitResult, gitClient } from '#test/git-client';
import { json, startTestStack } from '#test/stack';

/**
 * The local API Gateway refuses what the web distribution, API Gateway and Lambda refuse in AWS,
 * with the deployed answers: 413 for a Content-Length over `MAX_REQUEST_BODY_BYTES` (the
 * distribution's viewer-request function, so the event always fits Lambda's 6 MB); for a chunked
 * body, 413 over 10 MB of request and 500 when the event is over Lambda's 6 MB; 502 when the
 * function's result is, 504 past the integration timeout. Git's paths go to the Git front end, as
 * the CDN sends them in AWS, and none of these limits applies to them. Real handlers and real git;
 * the timeout and the payload limit are lowered (on a second server in front of the same
 * functions) where reaching them for real would be slow.
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

async function createRepository(name: string, visibility: { private?: boolean } = {}): Promise<void> {
  const response = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, ...visibility }),
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

  /** `POST /user/repos` creating `name`, its JSON padded with `pad` to exactly `bytes` bytes. */
  const createPadded = (name: string, bytes: number, pad = ' ') => {
    const json = JSON.stringify({ name });
    return fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
      body: json.slice(0, -1) + pad.repeat(bytes - json.length) + json.slice(-1),
    });
  };
  const repositoryStatus = async (name: string) =>
    (await fetch(`${stack.baseUrl}/repos/${owner.login}/${name}`, { headers: { Authorization: owner.auth } }))
      .status;

  it('answers a body one byte over the bound with 413 in GitHub shape, and writes nothing', async () => {
    const response = await createPadded('just-over', MAX_REQUEST_BODY_BYTES + 1);
    expect(response.status).toBe(413);
    expect(await json(response)).toEqual(GATEWAY_ERROR_BODIES.payloadTooLarge);
    expect(await repositoryStatus('just-over')).toBe(404);
  });

  it('creates the repository from the same body at the bound', async () => {
    const response = await createPadded('at-bound', MAX_REQUEST_BODY_BYTES);
    expect(response.status).toBe(201);
    expect(await repositoryStatus('at-bound')).toBe(200);
  });

  it("fits Lambda's payload with a body at the bound that escapes worst (every byte \\u0001): the function answers", async () => {
    // Six bytes in the event per byte of body; a raw control character is not JSON, so 400.
    const response = await createPadded('escaped', MAX_REQUEST_BODY_BYTES, '\u0001');
    expect(response.status).toBe(400);
    expect((await json(response)).message).toBe('Problems parsing JSON');
  });

  it("answers the issue's 7 MB JSON body with 413, where Lambda's limit made it a 500", async () => {
    const response = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'seven', description: 'x'.repeat(7 * MB) }),
    });
    expect(response.status).toBe(413);
    expect(await json(response)).toEqual(GATEWAY_ERROR_BODIES.payloadTooLarge);
  });

  it("still answers a chunked body (no Content-Length) as AWS would: 500 over Lambda's 6 MB, 413 over 10 MB", async () => {
    const chunked = (bytes: number) =>
      fetch(`${stack.baseUrl}/user/repos`, {
        method: 'POST',
        headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
        body: new Blob([JSON.stringify({ name: 'chunked', description: 'x'.repeat(bytes) })]).stream(),
        duplex: 'half',
      } as RequestInit);
    const overLambda = await chunked(7 * MB);
    expect(overLambda.status).toBe(500);
    expect(await json(overLambda)).toEqual(GATEWAY_ERROR_BODIES.serverError);
    const overGateway = await chunked(10 * MB);
    expect(overGateway.status).toBe(413);
    expect(await json(overGateway)).toEqual(GATEWAY_ERROR_BODIES.payloadTooLarge);
    expect(await repositoryStatus('chunked')).toBe(404);
  });

  it('lets Git through to the front end past every limit: an 11 MB push, and a clone of it', async () => {
    // Through API Gateway the push would be 413 (over 10 MB) and the clone 502 (over 6 MB).
    const dir = await workingCopy('eleven');
    const pushed = await pushRandom(dir, 'eleven.bin', 11 * MB);
    expect(pushed.code, pushed.stderr).toBe(0);
    const clone = join(work, 'eleven-clone');
    const cloned = await git(['clone', '-q', remote('eleven'), clone]);
    expect(cloned.code, cloned.stderr).toBe(0);
    const heads = await Promise.all([dir, clone].map((cwd) => git(['rev-parse', 'HEAD'], { cwd })));
    expect(heads[1]?.stdout).toBe(heads[0]?.stdout);
  }, 60_000);

  it("passes on the front end's early refusal of an 11 MB body: 401 with its challenge, not 502 or a reset", async () => {
    // The front end answers an anonymous push to a private repository before reading its body, and
    // closes; CloudFront and the load balancer hand that answer to the client.
    await createRepository('kept', { private: true });
    for (let round = 0; round < 10; round++) {
      const response = await fetch(`${stack.webUrl}/${owner.login}/kept.git/git-receive-pack`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-git-receive-pack-request' },
        body: randomBytes(11 * MB),
      });
      expect(response.status, `round ${round}`).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      await response.arrayBuffer();
    }
  }, 60_000);

  it("serves Git LFS objects over 10 MB up and down: the object routes are the front end's (locally the stand-in for S3)", async () => {
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

  describe('with the integration timeout lowered to 20 ms and the payload limit to 3 KB', () => {
    const limit = 3 * 1024;
    let gateway: LocalHttpServer;
    beforeAll(async () => {
      // A second local API Gateway in front of the same functions, table and Git front end.
      gateway = await startHttpServer({
        routes: ROUTES,
        port: 0,
        limits: { ...API_GATEWAY_LIMITS, integrationTimeoutMs: 20, maxInvocationBytes: limit },
        gitFrontend: stack.gitFrontendUrl,
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

    it("answers 502 when the function's result is over Lambda's payload limit (a repository's JSON)", async () => {
      await createRepository('described');
      const path = `/api/v3/repos/${owner.login}/described`;
      const whole = await fetch(`${stack.webUrl}${path}`);
      expect(whole.status).toBe(200);
      expect(Buffer.byteLength(await whole.text())).toBeGreaterThan(limit);
      // A gateway of its own with the default timeout: under load the read may take over 20 ms,
      // which would make this a 504, not the 502 it checks.
      const payloadOnly = await startHttpServer({
        routes: ROUTES,
        port: 0,
        limits: { ...API_GATEWAY_LIMITS, maxInvocationBytes: limit },
        gitFrontend: stack.gitFrontendUrl,
      });
      try {
        const cut = await fetch(`${payloadOnly.url}${path}`);
        expect(cut.status).toBe(502);
        expect(await json(cut)).toEqual(GATEWAY_ERROR_BODIES.serverError);
      } finally {
        await payloadOnly.stop();
      }
    });

    it('applies neither to Git paths: they go to the front end (a clone of the 11 MB push above)', async () => {
      const clone = join(work, 'via-second');
      const cloned = await git(['clone', '-q', remote('eleven').replace(stack.webUrl, gateway.url), clone]);
      expect(cloned.code, cloned.stderr).toBe(0);
      expect((await stat(join(clone, 'eleven.bin'))).size).toBe(11 * MB);
    });
  });
});
