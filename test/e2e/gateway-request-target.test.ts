import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_ERROR_BODIES } from '#shared/errors';
import { startTestStack } from '#test/stack';

/**
 * The local API Gateway takes only an origin-form request-target (`/path?query`): in AWS CloudFront
 * sends its path behaviours to their one origin, and nothing in a request names another host. A
 * target with an authority (`//host:port/…`, `/\host:port/…`, `http://host:port/…`, CONNECT's
 * `host:port`) is 400 in GitHub's shape, and nothing is contacted. The trap is a TCP server on
 * 127.0.0.1 that the refused targets name; it counts the connections it is offered.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let trap: Server;
let trapPort: number;
let trapped = 0;

interface RawAnswer {
  readonly status: number;
  readonly headers: string;
  readonly body: string;
}

/** Sends `head` as it is on a new connection to the gateway and reads the answer to the close. */
function raw(head: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(stack.webUrl).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${head.split('\r\n')[0]}`)));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const headers = end < 0 ? text : text.slice(0, end);
      const body = end < 0 ? '' : text.slice(end + 4);
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0),
        headers,
        body: /^transfer-encoding: chunked$/im.test(headers) ? unchunk(body) : body,
      });
    });
    socket.write(head);
  });
}

/** A chunked body's data, its chunks joined. */
function unchunk(body: string): string {
  let data = '';
  for (let at = 0; ; ) {
    const line = body.indexOf('\r\n', at);
    const size = Number.parseInt(body.slice(at, line), 16);
    if (!(size > 0)) return data;
    data += body.slice(line + 2, line + 2 + size);
    at = line + 2 + size + 2;
  }
}

/** A GET with the caller's credentials, which an open forwarder would hand to the named host. */
const get = (target: string, host = 'localhost') =>
  raw(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: token secret\r\nConnection: close\r\n\r\n`);

/** A GET without credentials. */
const anonymousGet = (target: string) =>
  raw(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);

/** The body of a refused request: 400 in GitHub's shape, and no connection to the trap. */
async function expectRefused(answer: RawAnswer): Promise<void> {
  expect(answer.status, answer.headers).toBe(400);
  expect(answer.headers).toMatch(/content-type: application\/json/i);
  expect(JSON.parse(answer.body)).toEqual(GATEWAY_ERROR_BODIES.badRequest);
  // Give a forwarded connection time to land before counting.
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(trapped).toBe(0);
}

beforeAll(async () => {
  trap = createServer((socket) => {
    trapped++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  trapPort = (trap.address() as { port: number }).port;
  stack = await startTestStack();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => trap?.close(resolve));
});

describe('the local API Gateway, given a request-target', () => {
  it('refuses a Git path behind `//host:port` with 400, and contacts no one', async () => {
    await expectRefused(await get(`//127.0.0.1:${trapPort}/o/r.git/info/refs?service=git-upload-pack`));
  });

  it('refuses a Git path behind `/\\host:port` (a URL parser reads `\\` as `/`) with 400', async () => {
    await expectRefused(await get(`/\\127.0.0.1:${trapPort}/o/r.git/info/refs?service=git-upload-pack`));
  });

  it('refuses an absolute-form target with 400, and contacts no one', async () => {
    await expectRefused(
      await get(
        `http://127.0.0.1:${trapPort}/o/r.git/info/refs?service=git-upload-pack`,
        `127.0.0.1:${trapPort}`,
      ),
    );
  });

  it('refuses CONNECT (authority-form) with 400, and contacts no one', async () => {
    await expectRefused(
      await raw(`CONNECT 127.0.0.1:${trapPort} HTTP/1.1\r\nHost: 127.0.0.1:${trapPort}\r\n\r\n`),
    );
  });

  it('refuses an API path behind `//host:port` with 400 rather than read the host as an authority', async () => {
    await expectRefused(await get(`//127.0.0.1:${trapPort}/api/v3/user`));
  });

  it('still forwards an origin-form Git path to the front end, which answers it', async () => {
    const target = '/octocat/x.git/info/refs?service=git-upload-pack';
    const direct = await fetch(`${stack.gitFrontendUrl}${target}`);
    const answer = await anonymousGet(target);
    expect(answer.status).toBe(direct.status);
    expect(answer.body).toBe(await direct.text());
    expect(answer.body).not.toContain(GATEWAY_ERROR_BODIES.unknownRoute.message);
    expect(trapped).toBe(0);
  });

  it('still serves an origin-form API path', async () => {
    const answer = await anonymousGet('/api/v3/user');
    expect(answer.status).toBe(401);
    expect(answer.body).toContain('Requires authentication');
  });
});
