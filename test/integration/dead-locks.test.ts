import { execFile } from 'node:child_process';
import { lstat, mkdir, mkdtemp, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeAbandonedLocks, removeDeadLocks } from '#vcs/stale-locks';

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

describe('removeAbandonedLocks', () => {
  /** A hosted bare repository with one commit on `main` and `feature`. */
  async function hosted(name: string): Promise<{ repo: string; commit: string }> {
    const repo = join(dir, name);
    await exec('git', ['init', '--bare', '-q', '-b', 'main', repo]);
    const tree = (
      await exec('git', ['-C', repo, 'hash-object', '-w', '-t', 'tree', '/dev/null'])
    ).stdout.trim();
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@example.com',
      GIT_COMMITTER_NAME: 'A',
      GIT_COMMITTER_EMAIL: 'a@example.com',
    };
    const commit = (await exec('git', ['-C', repo, 'commit-tree', tree, '-m', 'one'], { env })).stdout.trim();
    await exec('git', ['-C', repo, 'update-ref', 'refs/heads/main', commit]);
    return { repo, commit };
  }
  const updateFeature = (repo: string, commit: string) =>
    exec('git', ['-C', repo, 'update-ref', 'refs/heads/feature', commit]);

  it("removes a dead push's ref lock, after which git updates the ref again", async () => {
    const { repo, commit } = await hosted('dead-push.git');
    const lock = join(repo, 'refs', 'heads', 'feature.lock');
    await writeFile(lock, `${commit}\n`);
    await expect(updateFeature(repo, commit)).rejects.toThrow(/File exists/);
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);

    const started = Date.now();
    expect(await removeAbandonedLocks(repo, 2_000)).toEqual([lock]);
    expect(Date.now() - started).toBeLessThan(1_000);
    await updateFeature(repo, commit);
  });

  it('waits for a young lock: kept when its holder gives it back or renews it, removed once it stood still', async () => {
    const { repo, commit } = await hosted('live-push.git');
    const released = join(repo, 'refs', 'heads', 'released.lock');
    const renewed = join(repo, 'packed-refs.lock');
    const stale = join(repo, 'refs', 'tags', 'v1.lock');
    for (const lock of [released, renewed, stale]) await writeFile(lock, `${commit}\n`);
    // The live holders: one gives its lock back, the other takes it again (a new file), meanwhile.
    const holders = new Promise((resolve) => setTimeout(resolve, 300)).then(async () => {
      await rm(released);
      await rm(renewed);
      await writeFile(renewed, `${commit}\n`);
    });

    const started = Date.now();
    const removed = await removeAbandonedLocks(repo, 1_500);
    await holders;

    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(removed).toEqual([stale]);
    expect(await present(renewed)).toBe(true);
  });
});
