import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let child: ChildProcess | undefined;

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
  if (child?.pid && alive(child.pid)) child.kill('SIGKILL');
});

describe('npm start (bin/local.ts)', () => {
  it('starts the whole stack, prints its URLs, serves requests, and Ctrl-C leaves no process behind', async () => {
    const endpointsFile = join(await mkdtemp(join(tmpdir(), 'start-')), 'local.json');
    child = spawn(join(ROOT, 'node_modules/.bin/tsx'), ['bin/local.ts', '--in-memory'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', LOCAL_ENDPOINTS_FILE: endpointsFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    await expect.poll(() => output, { timeout: 30_000, interval: 100 }).toMatch(/Ready in/);
    // How long startup takes is the benchmark's `startup` section, not an assertion here.

    const baseUrl = /REST API:\s+(\S+)/.exec(output)?.[1];
    expect(baseUrl).toMatch(/^http:\/\/localhost:\d+\/api\/v3$/);
    expect(output).toMatch(/Web pages:\s+http:\/\/localhost:\d+/);
    const endpoints = JSON.parse(await readFile(endpointsFile, 'utf8'));
    expect(endpoints.baseUrl).toBe(baseUrl);

    const response = await fetch(`${baseUrl}/users/nobody`);
    expect(response.status).toBe(404);

    const children = descendants(child.pid ?? -1);
    expect(children.length).toBeGreaterThan(0);
    const exited = new Promise<number | null>((resolve) => child?.on('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    await expect.poll(() => children.filter(alive), { timeout: 10_000 }).toEqual([]);
  });
});
