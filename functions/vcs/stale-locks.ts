/**
 * The lock files a killed worker's git or hg leaves in an attempt's directory (a SIGKILL runs no
 * clean-up), removed before a step works there again; git refuses to run beside one ("Unable to
 * create '….lock': File exists"), and hg waits for its holder (600 s by default, then aborts).
 *
 * Whose locks they are: an attempt's directory is worked by one step at a time (Step Functions
 * runs an execution's states one after another, a Task has no timeout of its own, so a step is
 * retried only once Lambda has reported its invocation ended, its environment gone; a sync takes
 * the directory over only after the execution that left it has ended). Called when a step begins,
 * before it starts any process, every lock found is a dead process's, except an hg lock naming a
 * live process of this very PID namespace (hg writes `host/pid-namespace:pid`), which is kept.
 */
import { readdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Where git keeps the locks of a repository's files, besides its top level (`HEAD.lock`, `index.lock`, `packed-refs.lock`, `shallow.lock`, a marks file's). */
const GIT_LOCK_FOLDERS = ['refs', join('objects', 'info')];
/** hg's locks of a repository's working directory and store. */
const HG_LOCKS = [join('.hg', 'wlock'), join('.hg', 'store', 'lock')];

const entries = (dir: string) => readdir(dir, { withFileTypes: true }).catch(() => []);

/** The `.lock` files directly in `dir` (or anywhere under it). */
async function lockFiles(dir: string, recursive = false): Promise<string[]> {
  const names = await readdir(dir, { recursive }).catch(() => [] as string[]);
  return names.filter((name) => name.endsWith('.lock')).map((name) => join(dir, name));
}

/** A git repository's locks: its top level's and those of its refs and `objects/info`. */
async function gitLocks(repository: string): Promise<string[]> {
  const found = await Promise.all([
    lockFiles(repository),
    ...GIT_LOCK_FOLDERS.map((folder) => lockFiles(join(repository, folder), true)),
  ]);
  return found.flat();
}

/** Removes the dead processes' locks in `attemptDir` (see above); answers the paths removed. */
export async function removeDeadLocks(attemptDir: string): Promise<string[]> {
  // The attempt's own files (a marks file), then each folder in it: the job's home (`.gitconfig`),
  // a bare git repository, an hg clone.
  const locks = await lockFiles(attemptDir);
  for (const entry of await entries(attemptDir)) {
    if (!entry.isDirectory()) continue;
    const dir = join(attemptDir, entry.name);
    locks.push(...(await gitLocks(dir)));
    for (const lock of HG_LOCKS) if (await hgLockIsDead(join(dir, lock))) locks.push(join(dir, lock));
  }
  await Promise.all(locks.map((lock) => rm(lock, { force: true })));
  return locks;
}

/**
 * How long a lock in a hosted repository stays untouched before it is taken for a dead worker's.
 * Git holds a ref's lock for the moment it writes the ref (a push's locks, for the moments its
 * refs are updated), so a live holder gives it back long before this.
 */
export const ABANDONED_LOCK_MS = 10_000;

/**
 * Removes the locks a dead push left in a hosted repository (`Unable to create '….lock': File
 * exists` on every retry otherwise). Unlike an attempt's directory, the hosted repository is
 * shared: the Git front end may be taking a lock for an owner's push at this moment, on another
 * machine. So a lock is removed only once it has stood unchanged for `quietMs`: one younger is
 * waited for (at most `quietMs` in all), and kept if its holder gives it back or renews it.
 */
export async function removeAbandonedLocks(
  repository: string,
  quietMs = ABANDONED_LOCK_MS,
): Promise<string[]> {
  const seen = await Promise.all(
    (await gitLocks(repository)).map(async (path) => ({
      path,
      before: await stat(path).catch(() => undefined),
    })),
  );
  const youngest = Math.max(0, ...seen.map(({ before }) => (before ? before.mtimeMs : 0)));
  const wait = youngest + quietMs - Date.now();
  if (wait > 0) await sleep(wait);
  const removed: string[] = [];
  for (const { path, before } of seen) {
    const now = await stat(path).catch(() => undefined);
    if (!before || !now || now.ino !== before.ino || now.mtimeMs !== before.mtimeMs) continue;
    await rm(path, { force: true });
    removed.push(path);
  }
  return removed;
}

/** Whether an hg lock is there and its holder is not a live process of this PID namespace. */
async function hgLockIsDead(path: string): Promise<boolean> {
  const holder = await readlink(path).catch(() => readFile(path, 'utf8').catch(() => undefined));
  if (holder === undefined) return false;
  const at = holder.lastIndexOf(':');
  if (holder.slice(0, at) !== (await hgLockPrefix())) return true;
  try {
    process.kill(Number(holder.slice(at + 1)), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** How hg names this host and PID namespace in its locks (`mercurial/lock.py` `_getlockprefix`). */
async function hgLockPrefix(): Promise<string> {
  const namespace = await stat('/proc/self/ns/pid').catch(() => undefined);
  return namespace ? `${hostname()}/${namespace.ino.toString(16)}` : hostname();
}
