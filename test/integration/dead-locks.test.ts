import { execFile } from 'node:child_process';
import { lstat, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDeadLocks } from '#vcs/stale-locks';

/*
 * Which locks a step removes from its attempt's directory: git's (which name no holder; only a
 * dead worker's can be there when a step begins) and hg's whose holder is not alive: another PID
 * namespace's (a dead sandbox's) or a dead process of this one. A live hg of this namespace keeps
 * its lock, and real hg then takes a lock the dead holder left.
 */

const exec = promisify(execFile);
let dir: string;
const present = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dead-locks-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('removeDeadLocks', () => {
  it('removes git locks and dead hg holders, keeps a live hg holder of this namespace', async () => {
    const attempt = join(dir, 'attempt');
    const hg = join(attempt, 'raw.hg');
    await exec('hg', ['init', hg]);
    await exec('git', ['init', '--bare', '-q', join(attempt, 'raw.git')]);
    await mkdir(join(attempt, 'raw.git', 'refs', 'heads', 'topic'), { recursive: true });
    await mkdir(join(attempt, 'home'), { recursive: true });
    const gitLocks = [
      join(attempt, 'tfvc-marks.lock'),
      join(attempt, 'home', '.gitconfig.lock'),
      join(attempt, 'raw.git', 'packed-refs.lock'),
      join(attempt, 'raw.git', 'hg-marks.new.lock'),
      join(attempt, 'raw.git', 'refs', 'heads', 'topic', 'a.lock'),
    ];
    for (const lock of gitLocks) await writeFile(lock, '');
    const here = `${hostname()}/${(await stat('/proc/self/ns/pid')).ino.toString(16)}`;
    await symlink(`${here}:${process.pid}`, join(hg, '.hg', 'wlock'));
    await symlink(`${hostname()}/effff00d:${process.pid}`, join(hg, '.hg', 'store', 'lock'));

    const removed = await removeDeadLocks(attempt);

    expect(removed.sort()).toEqual([...gitLocks, join(hg, '.hg', 'store', 'lock')].sort());
    expect(await present(join(hg, '.hg', 'wlock'))).toBe(true);
    // A holder of this namespace that has ended: its lock goes too.
    const ended = await exec('sh', ['-c', 'echo $$']);
    await rm(join(hg, '.hg', 'wlock'));
    await symlink(`${here}:${ended.stdout.trim()}`, join(hg, '.hg', 'wlock'));
    expect(await removeDeadLocks(attempt)).toEqual([join(hg, '.hg', 'wlock')]);
    // Nothing left: hg works in the repository again at once.
    await exec('hg', ['--config', 'ui.timeout=1', '-R', hg, 'recover'], { timeout: 20_000 }).catch(
      (error: { stderr?: string }) => expect(error.stderr ?? '').toMatch(/no interrupted transaction/),
    );
  });
});
