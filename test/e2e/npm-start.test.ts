import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { gitClient } from '#test/git-client';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const children: ChildProcess[] = [];

/** Every process whose ancestry leads to `pid` (the JVM of DynamoDB Local among them). */
function descendants(pid: number): number[] {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, childParent] of table) {
      if (childParent !== parent) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterAll(() => {
  for (const child of children) if (child.pid && alive(child.pid)) child.kill('SIGKILL');
});

/** `npm start -- --in-memory` with its endpoints file at `endpointsFile`, once it says it is ready. */
async function npmStart(endpointsFile: string) {
  const child = spawn(join(ROOT, 'node_modules/.bin/tsx'), ['bin/local.ts', '--in-memory'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', LOCAL_ENDPOINTS_FILE: endpointsFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await expect.poll(() => output, { timeout: 30_000, interval: 100 }).toMatch(/Ready in/);
  return {
    child,
    output,
    baseUrl: /REST API:\s+(\S+)/.exec(output)?.[1] ?? '',
    webUrl: /Web pages:\s+(\S+)/.exec(output)?.[1] ?? '',
    /** Ctrl-C; the exit code. */
    stop: () => {
      child.kill('SIGINT');
      return exited;
    },
  };
}

describe('npm start (bin/local.ts)', () => {
  it('starts the whole stack, prints its URLs, serves requests, and Ctrl-C leaves no process behind', async () => {
    const endpointsFile = join(await mkdtemp(join(tmpdir(), 'start-')), 'local.json');
    const stack = await npmStart(endpointsFile);
    // How long startup takes is the benchmark's `startup` section, not an assertion here.

    expect(stack.baseUrl).toMatch(/^http:\/\/localhost:\d+\/api\/v3$/);
    expect(stack.webUrl).toMatch(/^http:\/\/localhost:\d+$/);
    const endpoints = JSON.parse(await readFile(endpointsFile, 'utf8'));
    expect(endpoints.baseUrl).toBe(stack.baseUrl);

    const response = await fetch(`${stack.baseUrl}/users/nobody`);
    expect(response.status).toBe(404);

    const started = descendants(stack.child.pid ?? -1);
    expect(started.length).toBeGreaterThan(0);
    expect(await stack.stop()).toBe(0);
    await expect.poll(() => started.filter(alive), { timeout: 10_000 }).toEqual([]);
  });

  it('keeps nothing between in-memory runs: a repository made again under the same name starts empty', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'start-'));
    const endpointsFile = join(dir, 'local.json');
    const git = await gitClient();
    const password = 'correct-horse-7';
    const repository = async (stack: Awaited<ReturnType<typeof npmStart>>) => {
      expect((await admin(endpointsFile, 'user', 'create', 'octocat', '--password', password)).code).toBe(0);
      const created = await fetch(`${stack.baseUrl}/user/repos`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`octocat:${password}`).toString('base64')}` },
        body: JSON.stringify({ name: 'moved' }),
      });
      expect(created.status).toBe(201);
      // Git over HTTP takes a token, not the password (as GitHub).
      const authorization = await fetch(`${stack.baseUrl}/authorizations`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`octocat:${password}`).toString('base64')}` },
        body: JSON.stringify({ scopes: ['repo'], note: 'npm start test' }),
      });
      expect(authorization.status).toBe(201);
      const { token } = (await authorization.json()) as { token: string };
      return { url: `${stack.webUrl}/octocat/moved.git`, token };
    };

    const first = await npmStart(endpointsFile);
    const work = join(dir, 'work');
    expect((await git(['init', '-q', work])).code).toBe(0);
    expect(
      (await git(['commit', '-q', '--allow-empty', '-m', 'from the first run'], { cwd: work })).code,
    ).toBe(0);
    const target = await repository(first);
    const pushed = await git(['push', '-q', target.url, 'HEAD:main'], { cwd: work, password: target.token });
    expect(pushed.stderr).toBe('');
    expect(await first.stop()).toBe(0);

    const second = await npmStart(endpointsFile);
    const again = await repository(second);
    const refs = await git(['ls-remote', again.url], { password: again.token });
    expect(refs).toMatchObject({ code: 0, stdout: '' });
    expect(await second.stop()).toBe(0);
    // Nothing of either run is left beside the endpoints file but the file, its key and the work tree.
    expect((await readdir(dir)).sort()).toEqual(['local.json', 'secrets.key', 'work']);
  });
});
