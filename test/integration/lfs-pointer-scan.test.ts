import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWithToolPath } from '#shared/tool-path';
import { prepareHome } from '#vcs/git-command';
import { findPointers } from '#vcs/lfs-pointers';

/*
 * The origin LFS step's look for pointers (`findPointers`) with the machine's git, seen through a
 * `git` on PATH that logs each call and runs the real one: a history without a pointer costs no
 * walk of every commit's trees (`rev-list --objects`), and one with pointers still finds each
 * with its path, past blobs of a pointer's size that are not one.
 */

const run = promisify(execFile);
let work: string;
let logFile: string;
let toolDir: string;

const pointerText = (oid: string, size: number) =>
  `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${size}\n`;

async function repository(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(work, name);
  const env = {
    PATH: process.env.PATH,
    HOME: work,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'A',
    GIT_AUTHOR_EMAIL: 'a@example.org',
    GIT_COMMITTER_NAME: 'A',
    GIT_COMMITTER_EMAIL: 'a@example.org',
  };
  await run('git', ['init', '-q', '-b', 'main', dir], { env });
  for (const [path, content] of Object.entries(files)) {
    await writeFile(join(dir, path), content);
    await run('git', ['add', path], { cwd: dir, env });
    await run('git', ['commit', '-qm', `add ${path}`], { cwd: dir, env });
  }
  return join(dir, '.git');
}

async function pointersLogged(repo: string) {
  await writeFile(logFile, '');
  const home = join(work, 'home');
  await prepareHome(home, [repo]);
  const found = await runWithToolPath(`${toolDir}:${process.env.PATH ?? ''}`, () =>
    findPointers(repo, { home, timeoutMs: 60_000 }),
  );
  return { found, calls: (await readFile(logFile, 'utf8')).split('\n').filter(Boolean) };
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'pointer-scan-'));
  logFile = join(work, 'git-calls.log');
  toolDir = join(work, 'tools');
  const realGit = (await run('sh', ['-c', 'command -v git'])).stdout.trim();
  await run('mkdir', ['-p', toolDir]);
  await writeFile(
    join(toolDir, 'git'),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${logFile}'\nexec '${realGit}' "$@"\n`,
  );
  await chmod(join(toolDir, 'git'), 0o755);
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('findPointers', () => {
  it('answers none for a history without a pointer without walking its trees', async () => {
    const repo = await repository('plain', {
      'a.txt': 'small\n',
      // The size of a pointer, but not one.
      'b.txt': `${'x'.repeat(140)}\n`,
      'c.txt': 'y'.repeat(4000),
    });
    const { found, calls } = await pointersLogged(repo);
    expect(found).toEqual([]);
    expect(calls.some((call) => call.includes('rev-list') && call.includes('--objects'))).toBe(false);
  });

  it('still finds every pointer with its path', async () => {
    const oid = 'a'.repeat(64);
    const repo = await repository('pointers', {
      'plain.txt': `${'x'.repeat(140)}\n`,
      'big.bin': pointerText(oid, 12345),
    });
    const { found } = await pointersLogged(repo);
    expect(found).toEqual([{ oid, size: 12345, path: 'big.bin' }]);
  });
});
