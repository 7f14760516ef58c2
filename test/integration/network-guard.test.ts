import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitDaemon, serveGitHttp } from '#local/git-origins';
import { gitAdapter } from '#vcs/git';
import {
  checkedAddresses,
  type Dialer,
  type DialTarget,
  guardedRequest,
  type Resolver,
  startGuardProxy,
  TUNNEL_PROGRAM,
  tcpDialer,
} from '#vcs/network-guard';
import { ForbiddenAddress, OriginFailed } from '#vcs/origin';

/*
 * Names only the stub resolver knows: git and Node can reach them only through the guard, and a
 * forbidden answer must be refused before any dial. The dialer lets through 127.0.0.1 (the test
 * servers) and fails the test if asked for anything else: no packet ever leaves for a forbidden range.
 */
const ZONE: Record<string, readonly string[]> = {
  'good.example': ['127.0.0.1'],
  'private.example': ['10.0.0.1'],
  'metadata.example': ['169.254.169.254'],
  'mapped.example': ['::ffff:127.0.0.2'],
  'mixed.example': ['127.0.0.1', '10.0.0.1'],
};
const resolve: Resolver = async (host) => {
  const answer = ZONE[host];
  if (!answer) throw new Error(`NXDOMAIN ${host}`);
  return answer;
};
const dialled: DialTarget[] = [];
const forbiddenDials: DialTarget[] = [];
const dial: Dialer = (target, timeoutMs) => {
  if (target.address !== '127.0.0.1') {
    forbiddenDials.push(target);
    throw new Error(`dialer called for ${target.address}`);
  }
  dialled.push(target);
  return tcpDialer(target, timeoutMs);
};
const guard = { allowedAddresses: ['127.0.0.1'], resolve, dial };
const FORBIDDEN_NAMES = ['private.example', 'metadata.example', 'mapped.example', 'mixed.example'];

let root: string;
let origin: OriginServer;
let daemon: OriginServer;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'guard-'));
  await makeFixtureRepository(join(root, 'repo.git'), { commits: 5 });
  origin = await serveGitHttp(root);
  daemon = await serveGitDaemon(root);
});
afterAll(async () => {
  await origin?.close();
  await daemon?.close();
  await rm(root, { recursive: true, force: true });
  expect(forbiddenDials).toEqual([]);
});

describe('checkedAddresses', () => {
  it('refuses a name when any address of the answer is forbidden', async () => {
    for (const name of FORBIDDEN_NAMES)
      await expect(checkedAddresses(name, guard)).rejects.toThrow(ForbiddenAddress);
    expect(await checkedAddresses('good.example', guard)).toEqual(['127.0.0.1']);
  });

  it('checks literal addresses without resolving them', async () => {
    await expect(checkedAddresses('[::ffff:169.254.169.254]', guard)).rejects.toThrow(ForbiddenAddress);
    await expect(checkedAddresses('127.0.0.1', { allowedAddresses: [] })).rejects.toThrow(ForbiddenAddress);
    await expect(checkedAddresses('nowhere.example', guard)).rejects.toThrow('could not be resolved');
  });
});

describe('guardedRequest', () => {
  it('connects to the checked address of an allowed name', async () => {
    const port = origin.port;
    const response = await guardedRequest(`http://good.example:${port}/page`, guard);
    expect(response.status).toBe(200);
    expect(response.body.toString()).toContain('Not git');
    expect(origin.requests).toContain('GET /page');
    expect(dialled.at(-1)).toEqual({ address: '127.0.0.1', port, host: 'good.example' });
    // A literal address goes through the dialer too (Node's HTTP client never dials by itself).
    const count = dialled.length;
    await guardedRequest(`${origin.url}/page`, guard);
    expect(dialled.length).toBe(count + 1);
  });

  it('refuses forbidden names before dialling', async () => {
    for (const name of FORBIDDEN_NAMES) {
      await expect(guardedRequest(`http://${name}:${origin.port}/page`, guard)).rejects.toThrow(
        ForbiddenAddress,
      );
    }
    expect(forbiddenDials).toEqual([]);
  });

  it('re-checks redirects: an allowed origin redirecting to a forbidden address is refused', async () => {
    const before = dialled.length;
    const to = encodeURIComponent(`http://metadata.example:${origin.port}/latest/meta-data/`);
    await expect(
      guardedRequest(`http://good.example:${origin.port}/redirect?to=${to}`, guard),
    ).rejects.toThrow(ForbiddenAddress);
    expect(dialled.length).toBe(before + 1);
    const allowed = encodeURIComponent(`http://good.example:${origin.port}/page`);
    expect((await guardedRequest(`${origin.url}/redirect?to=${allowed}`, guard)).status).toBe(200);
  });

  it('stops after five redirects and caps the body', async () => {
    let url = `http://good.example:${origin.port}/page`;
    for (let i = 0; i < 6; i++)
      url = `http://good.example:${origin.port}/redirect?to=${encodeURIComponent(url)}`;
    await expect(guardedRequest(url, guard)).rejects.toThrow('redirected too many times');
    const capped = await guardedRequest(`http://good.example:${origin.port}/page`, guard, { maxBytes: 10 });
    expect(capped.body.length).toBe(10);
    expect(capped.truncated).toBe(true);
  });
});

describe('the guard proxy', () => {
  const viaProxy = (proxyPort: number, init: { method: string; path: string }) =>
    new Promise<{ status: number; body: string }>((done, fail) => {
      const req = request(
        { host: '127.0.0.1', port: proxyPort, method: init.method, path: init.path },
        (res) => {
          let body = '';
          res.on('data', (chunk) => {
            body += chunk;
          });
          res.on('end', () => done({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('connect', (res, socket) => {
        socket.destroy();
        done({ status: res.statusCode ?? 0, body: '' });
      });
      req.on('error', fail);
      req.end();
    });

  it('answers 403 to CONNECT and to absolute-URI requests for forbidden targets, and forwards allowed ones', async () => {
    const proxy = await startGuardProxy(guard);
    try {
      expect(await viaProxy(proxy.port, { method: 'CONNECT', path: 'metadata.example:443' })).toMatchObject({
        status: 403,
      });
      expect(
        await viaProxy(proxy.port, { method: 'GET', path: `http://private.example:${origin.port}/page` }),
      ).toMatchObject({ status: 403 });
      expect(await viaProxy(proxy.port, { method: 'GET', path: '/not-absolute' })).toMatchObject({
        status: 400,
      });
      const ok = await viaProxy(proxy.port, {
        method: 'GET',
        path: `http://good.example:${origin.port}/page`,
      });
      expect(ok).toMatchObject({ status: 200 });
      expect(ok.body).toContain('Not git');
      expect(
        await viaProxy(proxy.port, { method: 'CONNECT', path: `good.example:${origin.port}` }),
      ).toMatchObject({
        status: 200,
      });
      expect(proxy.refusals.map((refusal) => refusal.reason)).toEqual([
        'forbidden',
        'forbidden',
        'bad_request',
      ]);
      expect(proxy.dialled.every((target) => target.address === '127.0.0.1')).toBe(true);
    } finally {
      await proxy.close();
    }
    expect(forbiddenDials).toEqual([]);
  });
});

describe('the tunnel program', () => {
  it('copies both ways until both are done: an origin that ends first still gets the rest (git and svn forms)', async () => {
    const received: string[] = [];
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk;
      });
      socket.on('end', () => {
        received.push(text);
        socket.destroy();
      });
      socket.end('greeting\n');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const port = (server.address() as { port: number }).port;
    const proxy = await startGuardProxy(guard);
    const program = join(root, 'tunnel.mjs');
    await writeFile(program, TUNNEL_PROGRAM(process.execPath), { mode: 0o700 });
    try {
      for (const args of [
        ['good.example', String(port)],
        [`good.example:${port}`, 'svnserve', '-t'],
      ]) {
        const child = spawn(program, args, { env: { IMPORT_GUARD_PROXY: `127.0.0.1:${proxy.port}` } });
        let out = '';
        const exited = new Promise((done) => child.on('close', done));
        // Sent only after the origin has ended its side.
        child.stdout.on('data', (chunk) => {
          out += chunk;
          if (out === 'greeting\n') child.stdin.end('after the end\n');
        });
        expect(await exited).toBe(0);
        expect(out).toBe('greeting\n');
      }
      expect(received).toEqual(['after the end\n', 'after the end\n']);
    } finally {
      await proxy.close();
      server.close();
    }
  });
  it("leaves the tool's stderr blocking while it runs: svn and git hand their own to the tunnel", async () => {
    // The tunnel's stderr is the tool's: one open file, shared. Made non-blocking by the tunnel, the
    // tool's next write to a full stderr failed with EAGAIN (svnrdump then exited 1 without a word,
    // its error line failing the same way). The tool here starts the tunnel as svn does (stdin and
    // stdout piped, stderr its own), waits for the origin's greeting through it, then writes 4 MB
    // to stderr while nobody reads it for a second.
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.write('greeting\n');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const port = (server.address() as { port: number }).port;
    const proxy = await startGuardProxy(guard);
    const dir = await mkdtemp(join(root, 'tunnel-stderr-'));
    const program = join(dir, 'tunnel.mjs');
    await writeFile(program, TUNNEL_PROGRAM(process.execPath), { mode: 0o700 });
    const tool = [
      'mkfifo "$DIR/out"',
      'sleep 30 | "$DIR/tunnel.mjs" good.example "$PORT" > "$DIR/out" &',
      'read -r greeting < "$DIR/out"',
      'head -c 4194304 /dev/zero >&2',
    ].join('\n');
    const child = spawn('bash', ['-c', tool], {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        PATH: process.env.PATH,
        DIR: dir,
        PORT: String(port),
        IMPORT_GUARD_PROXY: `127.0.0.1:${proxy.port}`,
      },
    });
    try {
      // 'exit', not 'close': the tunnel, still running, holds the same stderr open.
      const exited = new Promise<number | null>((done) => child.on('exit', done));
      child.stderr.pause();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      let bytes = 0;
      let words = '';
      child.stderr.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (chunk[0] !== 0) words += chunk.toString();
      });
      child.stderr.resume();
      expect(await exited, words).toBe(0);
      await expect.poll(() => bytes).toBe(4194304);
    } finally {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      await proxy.close();
      server.close();
    }
  }, 30_000);
});

describe('the Git adapter behind the guard', () => {
  const adapter = gitAdapter({ resolve, dial });
  const job = async (url: string) => ({
    url,
    allowedAddresses: ['127.0.0.1'],
    workDir: await mkdtemp(join(root, 'job-')),
  });

  it('fetches through the guard: git reaches a name only the stub resolver knows', async () => {
    const before = dialled.length;
    for (const url of [
      `http://good.example:${origin.port}/repo.git`,
      `git://good.example:${daemon.port}/repo.git`,
    ]) {
      expect(await adapter.detect({ url, allowedAddresses: ['127.0.0.1'] })).toEqual({
        kind: 'found',
        vcs: 'git',
      });
      expect(await adapter.importRawChunk(await job(url), 600_000, () => undefined)).toMatchObject({
        done: true,
        commitCount: 5,
      });
    }
    expect(dialled.length).toBeGreaterThan(before);
  }, 60_000);

  it('refuses forbidden names in detection and in git fetches (http and git://), dialling nothing', async () => {
    for (const name of FORBIDDEN_NAMES) {
      for (const url of [`http://${name}:${origin.port}/repo.git`, `git://${name}:${daemon.port}/repo.git`]) {
        await expect(adapter.detect({ url, allowedAddresses: ['127.0.0.1'] })).rejects.toThrow(
          ForbiddenAddress,
        );
        const error = await adapter
          .importRawChunk(await job(url), 600_000, () => undefined)
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ForbiddenAddress);
        expect((error as Error).message).toBe('The URL points to an address the importer may not reach');
      }
    }
    expect(forbiddenDials).toEqual([]);
  }, 60_000);

  it('refuses a git fetch redirected from an allowed origin to a forbidden address', async () => {
    // git follows the redirect of its first request (http.followRedirects=initial) through the proxy.
    const to = `http://metadata.example:${origin.port}/repo.git/info/refs?service=git-upload-pack`;
    const url = `http://good.example:${origin.port}/redirect?to=${encodeURIComponent(to)}&x=`;
    const error = await adapter
      .importRawChunk(await job(url), 600_000, () => undefined)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OriginFailed);
    expect(forbiddenDials).toEqual([]);
  }, 30_000);

  it('never hands git an option-looking or non-network URL', async () => {
    const marker = join(root, 'injected');
    for (const url of [
      `--upload-pack=touch ${marker}`,
      '-oProxyCommand=touch x',
      `ext::sh -c touch% ${marker}`,
      'file:///etc',
    ]) {
      await expect(adapter.detect({ url, allowedAddresses: [] })).rejects.toThrow(OriginFailed);
      await expect(adapter.importRawChunk(await job(url), 600_000, () => undefined)).rejects.toThrow(
        OriginFailed,
      );
    }
    expect(existsSync(marker)).toBe(false);
  });
});
