import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const SCRIPT = new URL('../../scripts/leaves-tree-clean.sh', import.meta.url).pathname;

/** Runs the check, as `npm test` runs it around vitest, in `cwd` on `command`; its exit code. */
async function check(cwd: string, command: string): Promise<{ code: number; stderr: string }> {
  try {
    await exec('bash', [SCRIPT, 'bash', '-c', command], { cwd });
    return { code: 0, stderr: '' };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

describe('the check that the test run leaves the working tree as it found it', () => {
  let tree: string;
  beforeEach(async () => {
    tree = await mkdtemp(join(tmpdir(), 'tree-clean-'));
    await exec('git', ['init', '-q', tree]);
    await writeFile(join(tree, '.gitignore'), '.data/\n');
    await writeFile(join(tree, 'tracked.txt'), 'one\n');
    await exec('git', ['-C', tree, 'add', '.']);
  });
  afterEach(() => rm(tree, { recursive: true, force: true }));

  it('passes a run that writes only to ignored folders', async () => {
    expect(await check(tree, 'mkdir -p .data && touch .data/x')).toEqual({ code: 0, stderr: '' });
  });

  it('fails a run that leaves a new file, and names it (listen.pid, dst/.hg left at the root once)', async () => {
    const result = await check(tree, 'mkdir -p dst/.hg && touch dst/.hg/requires listen.pid');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('?? dst/.hg/requires');
    expect(result.stderr).toContain('?? listen.pid');
  });

  it('fails a run that changes a tracked file, but not for changes made before it', async () => {
    await writeFile(join(tree, 'mine.txt'), 'work in progress\n');
    expect((await check(tree, 'true')).code).toBe(0);
    expect((await check(tree, 'echo two >> tracked.txt')).code).toBe(1);
  });

  it("keeps the command's own failure", async () => {
    expect((await check(tree, 'exit 3')).code).toBe(3);
  });
});
