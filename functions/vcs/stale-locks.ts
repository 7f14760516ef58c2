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

/** Where git keeps the locks of a repository's files, besides its top level (`HEAD.lock`, `index.lock`, `packed-refs.lock`, `shallow.lock`, a marks file's). */
const GIT_LOCK_FOLDERS = ['refs', join('objects', 'info')];
/** hg's locks of a repository's working directory and store. */
const HG_LOCKS = [join('.hg', 'wlock'), join('.hg', 'store', 'lock')];

const entries = (dir: string) => readdir(dir, { withFileTypes: true }).catch(() => []);

/** Removes the dead processes' locks in `attemptDir` (see above); answers the paths removed. */
export async function removeDeadLocks(attemptDir: string): Promise<string[]> {
  const locks: string[] = [];
  const lockFiles = async (dir: string, recursive = false) => {
    const names = await readdir(dir, { recursive }).catch(() => [] as string[]);
    locks.push(...names.filter((name) => name.endsWith('.lock')).map((name) => join(dir, name)));
  };
  // The attempt's own files (a marks file), then each folder in it: the job's home (`.gitconfig`),
  // a bare git repository, an hg clone.
  await lockFiles(attemptDir);
  for (const entry of await entries(attemptDir)) {
    if (!entry.isDirectory()) continue;
    const dir = join(attemptDir, entry.name);
    await lockFiles(dir);
    for (const folder of GIT_LOCK_FOLDERS) await lockFiles(join(dir, folder), true);
    for (const lock of HG_LOCKS) if (await hgLockIsDead(join(dir, lock))) locks.push(join(dir, lock));
  }
  await Promise.all(locks.map((lock) => rm(lock, { force: true })));
  return locks;
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
